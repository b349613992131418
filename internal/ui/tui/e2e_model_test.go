package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"

	"github.com/agentteam/agentteam/team/registry"
)

// TestChatModelCommandSwitchesTheLeadInTmux: in the real program, /model
// moves the lead from the default provider's model to another provider's,
// whose server and key its next turn then uses; the status line, the team
// panel and the registry follow. The choice outlives the process: a chat
// resumed after quitting talks to smart/big too.
func TestChatModelCommandSwitchesTheLeadInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	answer := fakellm.Script(func(c fakellm.Call) fakellm.Reply {
		return fakellm.Reply{Content: "answered by " + c.Req.Model}
	})
	cheap := fakellm.New(answer, fakellm.WithAPIKey("cheap-key"))
	defer cheap.Close()
	smart := fakellm.New(answer, fakellm.WithAPIKey("smart-key"))
	defer smart.Close()
	home, ws := t.TempDir(), t.TempDir()
	conf := fmt.Sprintf(`provider = "cheap"
[providers.cheap]
base_url = %q
api_key_env = "CHEAP_KEY"
model = "small"
price_input_per_million = 1
price_output_per_million = 2
[providers.smart]
base_url = %q
api_key_env = "SMART_KEY"
model = "big"
`, cheap.URL(), smart.URL())
	if err := os.MkdirAll(filepath.Join(home, ".config", "agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "agentteam", "config.toml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, ws)
	s.typeLine("HOME=" + home + " XDG_CONFIG_HOME= CHEAP_KEY=cheap-key SMART_KEY=smart-key " + bin + " chat")
	s.waitFor("the TUI on cheap/small", contains("Team", "lead · cheap/small"))

	s.typeLine("hello")
	s.waitFor("the answer from small", contains("answered by small"))
	s.typeLine("/model smart/big")
	s.waitFor("the switch", contains("the lead talks to smart/big from its next turn"))
	s.typeLine("hello again")
	s.waitFor("the answer from big", contains("answered by big", "lead · smart/big"))

	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	if cheap.CallsFor("lead") != 1 || smart.CallsFor("lead") != 1 {
		t.Fatalf("the lead called cheap %d and smart %d times, want once each", cheap.CallsFor("lead"), smart.CallsFor("lead"))
	}
	for _, srv := range []*fakellm.Server{cheap, smart} {
		if v := srv.Violations(); len(v) > 0 {
			t.Fatal(v)
		}
	}
	c, err := registry.NewRegistry(filepath.Join(ws, ".agentteam", "team", "config.json"), "").Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// cheap's turn has a price, smart's none: the lead's cost is unknown, its tokens are not.
	if c.Lead == nil || c.Lead.Model != "smart/big" || c.Lead.Tokens == 0 || c.Lead.Cost != nil {
		t.Fatalf("the registry's lead entry %+v", c.Lead)
	}

	s.typeLine("HOME=" + home + " XDG_CONFIG_HOME= CHEAP_KEY=cheap-key SMART_KEY=smart-key " + bin + " chat --resume")
	s.waitFor("the resumed TUI on smart/big", contains("Team", "lead · smart/big"))
	s.typeLine("and after the resume")
	s.waitFor("the answer from big after the resume", func(screen string) bool {
		return smart.CallsFor("lead") == 2 && strings.Contains(screen, "answered by big")
	})
	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	if cheap.CallsFor("lead") != 1 || smart.CallsFor("lead") != 2 {
		t.Fatalf("after the resume the lead called cheap %d and smart %d times, want 1 and 2", cheap.CallsFor("lead"), smart.CallsFor("lead"))
	}
}
