package team

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// fileStamps is every file under root with its size and modification time.
func fileStamps(t *testing.T, root string) map[string]string {
	t.Helper()
	stamps := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		stamps[path] = fmt.Sprintf("%s %d bytes", fi.ModTime().Format(time.RFC3339Nano), fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return stamps
}

// TestNothingIsWrittenAfterClose: a request whose deadline passed is being
// acted on (the forced shutdown, the plan's expiry, the failed handoff are
// half done) when the team closes. Close waits for that work, so once it
// returns no file of the workspace changes any more.
func TestNothingIsWrittenAfterClose(t *testing.T) {
	testkit.SkipShort(t)
	const hold = 300 * time.Millisecond // how long the expiry's work is held up, after Close began
	ctx := context.Background()
	cases := []struct {
		name  string
		opts  Options
		start func(t *testing.T, tm *Team, sw *statusWatcher)
		model fakellm.Script
	}{
		{"forced shutdown", Options{ShutdownTimeout: 100 * time.Millisecond},
			func(t *testing.T, tm *Team, sw *statusWatcher) {
				if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "sleep"}); err != nil {
					t.Fatal(err)
				}
				sw.wait(t, "alice", "running bash")
				if _, err := tm.Protocols().RequestShutdown(ctx, "lead", "alice", "stop"); err != nil {
					t.Fatal(err)
				}
			},
			func(fakellm.Call) fakellm.Reply {
				return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"sleep 30"}`}}}
			}},
		{"plan not reviewed", Options{PlanTimeout: 100 * time.Millisecond},
			func(t *testing.T, tm *Team, sw *statusWatcher) {
				if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "write out.txt", PlanMode: true}); err != nil {
					t.Fatal(err)
				}
			},
			planScript},
		{"handoff step without answer", Options{HandoffTimeout: 100 * time.Millisecond},
			func(t *testing.T, tm *Team, sw *statusWatcher) {
				spawnIdle(t, tm, sw, "alice", "programmer", "bob", "programmer")
				tm.handoffs.SetStall(func(typ inbox.MessageType, h *handoff.Handoff) bool { return typ == handoff.TypeHandoffRequest })
				if _, err := tm.Protocols().Handoff(ctx, "alice", tools.HandoffSpec{To: "bob", Task: "write the parser", Reason: "r", Context: "c"}); err != nil {
					t.Fatal(err)
				}
			},
			fakellm.Always(fakellm.Reply{Content: "ok"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := fakellm.New(c.model)
			defer srv.Close()
			ws, err := workspace.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			// The first expiry is held up inside its work, right after it is
			// logged: the team closes meanwhile.
			expiring := make(chan struct{})
			var once sync.Once
			sw := newStatusWatcher()
			opts := c.opts
			opts.Workspace = ws
			opts.OnEvent = func(e event.Event) {
				sw.on(e)
				if _, ok := e.Payload.(event.RequestExpired); ok {
					held := false
					once.Do(func() { close(expiring); held = true })
					if held {
						time.Sleep(hold)
					}
				}
			}
			tm := newTestTeam(t, srv, opts)
			c.start(t, tm, sw)
			select {
			case <-expiring:
			case <-time.After(20 * time.Second):
				t.Fatal("the request never expired")
			}
			began := time.Now()
			tm.Close(context.Background())
			took := time.Since(began)
			before := fileStamps(t, ws.Root)
			time.Sleep(hold + 200*time.Millisecond)
			after := fileStamps(t, ws.Root)
			if !maps.Equal(before, after) {
				for path, s := range after {
					if before[path] != s {
						t.Errorf("%s changed after Close returned (it took %v): %q → %q", path, took.Round(time.Millisecond), before[path], s)
					}
				}
			}
		})
	}
}

// stuckModel is a model client that does not honour its context: a call
// returns only once release is closed.
type stuckModel struct{ entered, release chan struct{} }

func (m stuckModel) Complete(context.Context, llm.Request) (llm.Response, error) {
	select {
	case m.entered <- struct{}{}:
	default:
	}
	<-m.release
	return llm.Response{}, errors.New("released")
}

// TestCloseIsBoundedByItsContext: a teammate's goroutine that does not
// stop (its model call ignores the context) holds Close only until Close's
// context ends; it then says so, and the team stays this process's (the
// owner lock held) rather than let another process run it meanwhile.
func TestCloseIsBoundedByItsContext(t *testing.T) {
	m := stuckModel{entered: make(chan struct{}, 1), release: make(chan struct{})}
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tm := newTestTeam(t, nil, Options{Workspace: ws, Model: m})
	defer close(m.release) // before the cleanup's Close, which waits for it
	if err := tm.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "work"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-m.entered:
	case <-time.After(20 * time.Second):
		t.Fatal("alice never called the model")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = tm.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "did not stop in time") {
		t.Fatalf("Close with a stuck teammate: %v", err)
	}
	if err := registry.CheckNotRunning(ws.TeamDir()); err == nil {
		t.Error("the owner lock was given back while a teammate's goroutine still runs")
	}
}
