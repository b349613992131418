package tui

import (
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/ui/tui/panel"
)

// TestChatSpinnerAndContextInTmux: in the real program, while the model
// has not answered, the lead's title shows a spinner that turns and the
// seconds it has worked; once answered, it is idle and its context
// fullness shows.
func TestChatSpinnerAndContextInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	release := make(chan struct{})
	srv := fakellm.New(fakellm.Script(func(c fakellm.Call) fakellm.Reply {
		<-release // the test lets the lead's model answer once it has seen the spinner
		return fakellm.Reply{Content: "the slow answer"}
	}))
	defer srv.Close()
	var once sync.Once
	let := func() { once.Do(func() { close(release) }) }
	defer let()

	s := startTmux(t, t.TempDir())
	s.typeLine("HOME=" + t.TempDir() + " XDG_CONFIG_HOME= OPENAI_API_KEY=test-key " + bin + " chat --base-url " + srv.URL() + " --model gpt-4o")
	s.waitFor("the TUI", contains("Team", "lead · gpt-4o"))
	s.typeLine("take your time")

	working := regexp.MustCompile(`lead · (\S) working ([1-9]\d*s)`)
	var first string
	s.waitFor("the spinner and a second at work", func(screen string) bool {
		m := working.FindStringSubmatch(screen)
		if m == nil {
			return false
		}
		first = m[1]
		return true
	})
	s.waitFor("the spinner turning", func(screen string) bool {
		m := working.FindStringSubmatch(screen)
		return m != nil && m[1] != first
	})
	let()
	screen := s.waitFor("the answer", contains("the slow answer", "lead · idle"))
	if working.MatchString(screen) {
		t.Fatalf("the lead still shows a spinner once idle:\n%s", screen)
	}
	// The prompts are some 1.3k tokens of gpt-4o's 128k.
	ctx := regexp.MustCompile(`gpt-4o idle · ctx (<1|[1-9])% ·(?s:.*)lead ctx (<1|[1-9])%`)
	s.waitFor("the lead's context fullness", ctx.MatchString)

	s.run("send-keys", "-t", "e2e", "C-c")
	s.waitFor("the shell prompt back", func(screen string) bool { return lastLine(screen) == prompt })
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
	if !strings.Contains(strings.Join(panel.SpinFrames, ""), first) {
		t.Fatalf("%q is not a spinner frame", first)
	}
}
