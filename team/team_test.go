package team

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/registry"
)

func openTeam(t *testing.T, srv *fakellm.Server, workers int) *Team {
	return newTestTeam(t, srv, Options{MaxWorkers: workers, MaxQueue: 50})
}

// TestPoolBoundSeenByTheModelServer: 12 teammates with 4 workers against a
// server that takes 300 ms a call: the server sees at most 4 teammate
// requests at once, and reaches 4.
func TestPoolBoundSeenByTheModelServer(t *testing.T) {
	var spawns []fakellm.ToolCall
	for i := 0; i < 12; i++ {
		spawns = append(spawns, fakellm.ToolCall{Name: "spawn_teammate",
			Args: fmt.Sprintf(`{"name":"w%02d","role":"worker","prompt":"do part %d"}`, i, i)})
	}
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: spawns}, {Content: "spawned twelve"}},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" {
			return fakellm.Reply{Content: "reports received"}
		}
		return fakellm.Reply{Content: c.Agent + " finished", Delay: 300 * time.Millisecond}
	})
	srv := fakellm.New(script)
	defer srv.Close()
	tm := openTeam(t, srv, 4)

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	final, err := tm.Run(ctx, "split the work in twelve")
	if err != nil {
		t.Fatal(err)
	}
	if final == "" {
		t.Fatal("no final answer")
	}
	teammate := func(agent string) bool { return strings.HasPrefix(agent, "w") }
	if peak := srv.MaxInFlight(teammate); peak != 4 {
		t.Fatalf("peak teammate requests in flight = %d, want exactly 4", peak)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
	cfg, _ := tm.Registry().Read(t.Context())
	if len(cfg.Teammates) != 12 {
		t.Fatalf("%d teammates registered", len(cfg.Teammates))
	}
	for _, m := range cfg.Teammates {
		if m.Status != registry.StatusShutdown || m.Cycles != 1 {
			t.Errorf("%s: status %s cycles %d", m.Name, m.Status, m.Cycles)
		}
	}
	results, _, _ := tm.Mailbox().ReadAll(ctx, "lead")
	if len(results) != 12 {
		t.Fatalf("the lead got %d reports, want 12", len(results))
	}
}

// TestFailingTeammateBecomesFailedAndTellsTheLead: a teammate whose model
// calls keep failing is marked failed and the lead gets an error message.
func TestFailingTeammateBecomesFailedAndTellsTheLead(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{{Name: "spawn_teammate", Args: `{"name":"flaky","role":"r","prompt":"p"}`}}}, {Content: "ok"}},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "flaky" {
			return fakellm.Reply{Status: 500}
		}
		return fakellm.Reply{Content: "the lead saw the failure"}
	})
	srv := fakellm.New(script)
	defer srv.Close()
	tm := openTeam(t, srv, 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := tm.Run(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	cfg, _ := tm.Registry().Read(t.Context())
	if len(cfg.Teammates) != 1 || cfg.Teammates[0].Status != registry.StatusFailed || cfg.Teammates[0].Error == "" {
		t.Fatalf("registry %+v: want flaky failed with a reason", cfg.Teammates)
	}
	msgs, _, _ := tm.Mailbox().ReadAll(ctx, "lead")
	if len(msgs) != 1 || msgs[0].Type != "error" || msgs[0].From != "flaky" {
		t.Fatalf("lead inbox %+v: want one error message from flaky", msgs)
	}
	if n := srv.CallsFor("flaky"); n < 2 {
		t.Fatalf("the failing call was tried %d times: want retries", n)
	}
}
