package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/demo"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// openDemoTeam is a real team in a temp workspace, on the offline demo model.
func openDemoTeam(t *testing.T, b *bridge.Bridge) *team.Team {
	t.Helper()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	model := llm.NewClient(llm.ClientConfig{BaseURL: demo.BaseURL, APIKey: "demo", Model: "demo",
		HTTPClient: demo.NewHTTPClient(), Stream: true})
	tm, err := team.Open(context.Background(), team.Options{Workspace: ws, Model: model, OnEvent: b.Event, OnDelta: b.Delta,
		PollInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tm.ShutdownAll("test over")
		tm.Close(context.Background())
	})
	return tm
}

func TestTeamEngineAgainstARealTeam(t *testing.T) {
	b := bridge.New()
	tm := openDemoTeam(t, b)
	eng := engine.NewEngine(tm, nil) // no chat: the no-key mode
	ctx := context.Background()

	if err := eng.Say("hello"); err == nil {
		t.Fatal("Say without a chat should fail")
	}
	if err := eng.Spawn(ctx, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "say hello"}); err != nil {
		t.Fatal(err)
	}
	if err := eng.Send(ctx, "alice", "from the person"); err != nil {
		t.Fatal(err)
	}
	if err := eng.Send(ctx, "nobody", "lost?"); err == nil || !strings.Contains(err.Error(), "no agent named nobody") {
		t.Fatalf("send to an unknown agent: %v", err)
	}
	if _, err := eng.Broadcast(ctx, "all hands"); err != nil {
		t.Fatal(err)
	}
	text, err := eng.Inbox(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"user → alice (message): say hello", "user → alice (message): from the person", "(broadcast): all hands"} {
		if !strings.Contains(text, want) {
			t.Fatalf("alice's inbox lacks %q:\n%s", want, text)
		}
	}
	if text, _ := eng.Inbox(ctx, ""); !strings.Contains(text, "alice") || !strings.Contains(text, "INBOX") {
		t.Fatalf("inbox list:\n%s", text)
	}
	if text, _ := eng.Describe(ctx); !strings.Contains(text, "alice") || !strings.Contains(text, "programmer") {
		t.Fatalf("describe:\n%s", text)
	}
	if _, ok := eng.Conversation("alice"); !ok {
		t.Fatal("alice's conversation is not there")
	}
	if _, ok := eng.Conversation("lead"); !ok {
		t.Fatal("the lead's conversation is not there")
	}
	if _, ok := eng.Conversation("zed"); ok {
		t.Fatal("a conversation for an agent nobody runs")
	}
	if eng.Interrupt() {
		t.Fatal("interrupted a lead that has no chat")
	}
	// The spawn and the messages reached the subscriber, in order.
	m, _ := b.Take()
	var kinds []string
	for _, it := range m.Items {
		if it.Event == nil {
			continue
		}
		switch p := it.Event.Payload.(type) {
		case event.Spawn:
			if p.From == inbox.UserName {
				kinds = append(kinds, string(it.Event.Kind())+":")
			}
		case event.MessageDelivered:
			if p.From == inbox.UserName {
				kinds = append(kinds, string(it.Event.Kind())+":"+p.Content)
			}
		}
	}
	want := []string{"spawn:", "message:say hello", "message:from the person", "message:all hands"}
	if strings.Join(kinds, "|") != strings.Join(want, "|") {
		t.Fatalf("events %v, want %v", kinds, want)
	}
}

// /approve of a name no teammate has says so, and /send to a teammate that
// has shut down says nobody reads it now, as agentteam send does.
func TestEngineCommandsSayWhoIsNotThere(t *testing.T) {
	b := bridge.New()
	tm := openDemoTeam(t, b)
	eng := engine.NewEngine(tm, nil)
	ctx := context.Background()
	run := func(line string) (string, error) {
		t.Helper()
		_, call, err := engine.EngineCommand(line, "", "")
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		r, err := call(ctx, eng)
		return r.Text, err
	}
	if _, err := run("/approve nobody"); err == nil || !strings.Contains(err.Error(), "no agent named nobody") {
		t.Errorf("/approve nobody: %v", err)
	}
	if err := eng.Spawn(ctx, tools.SpawnSpec{Name: "bob", Role: "tester", Prompt: "say hello"}); err != nil {
		t.Fatal(err)
	}
	tm.ShutdownAll("test")
	testkit.Eventually(t, 10*time.Second, "bob shut down", func() bool {
		c, err := tm.Registry().Read(t.Context())
		return err == nil && c.Find("bob") >= 0 && c.Teammates[c.Find("bob")].Status == registry.StatusShutdown
	})
	text, err := run("/send bob are you there?")
	if err != nil || !strings.Contains(text, "bob has shut down") {
		t.Errorf("/send to a shut-down teammate: %q, %v", text, err)
	}
}
