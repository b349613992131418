package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/fakellm"
	"github.com/agentteam/agentteam/internal/natsstore"
	"github.com/agentteam/agentteam/internal/storetest"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/workspace"
)

var (
	_ RegistryStore = (*natsstore.Doc[*Config])(nil)
	_ board.Store   = (*natsstore.Doc[*board.File])(nil)
	_ EventLines    = (*natsstore.EventLog)(nil)
)

// natsURL starts an embedded JetStream server on 127.0.0.1 for t.
func natsURL(t *testing.T) string {
	t.Helper()
	s, err := natsstore.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

// natsConn is a new connection to url, as another process would open.
func natsConn(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

func natsRegistry(t *testing.T, url, teamName string) *Registry {
	t.Helper()
	doc, err := natsstore.OpenDocWith(context.Background(), natsConn(t, url), teamName, "registry", EmptyConfig(teamName))
	if err != nil {
		t.Fatal(err)
	}
	return NewRegistryOn(doc, teamName)
}

// The registry on a KV entry keeps the same contract as on a file.
func TestRegistryOnJetStreamKeepsTheDocContract(t *testing.T) {
	url := natsURL(t)
	storetest.RunDoc(t, storetest.DocOpener[Config]{
		Open: func(t *testing.T) storetest.Doc[Config] { return natsRegistry(t, url, "reg") },
		Inc: func(c *Config) {
			i := c.Find("counter")
			if i < 0 {
				c.Teammates = append(c.Teammates, Member{Name: "counter"})
				i = len(c.Teammates) - 1
			}
			c.Teammates[i].Turns++
		},
		Count: func(c Config) int {
			if i := c.Find("counter"); i >= 0 {
				return c.Teammates[i].Turns
			}
			return 0
		},
	})
}

// The event log on a stream keeps the event log contract through EventLog.
func TestEventLogOnJetStreamKeepsTheEventLogContract(t *testing.T) {
	url := natsURL(t)
	long := strings.Repeat("x", 3000)
	open := func(t *testing.T) *natsstore.EventLog {
		l, err := natsstore.OpenEventLog(context.Background(), natsConn(t, url), "ev")
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	storetest.RunEventLog(t, storetest.EventLogOpener{
		Open: func(t *testing.T) func(int) {
			log := NewEventLogTo(open(t), nil)
			return func(n int) { log.Emit(Event{Agent: "alice", Payload: Reply{Text: long, Turn: n}}) }
		},
		Read: func(t *testing.T) ([]int, error) {
			lines, err := open(t).Lines(context.Background())
			if err != nil {
				return nil, err
			}
			var got []int
			for _, line := range lines {
				var e Event
				if err := json.Unmarshal(line, &e); err != nil {
					return got, fmt.Errorf("line %d: %w", len(got)+1, err)
				}
				r, ok := e.Payload.(Reply)
				if !ok || r.Text != long {
					return got, fmt.Errorf("line %d is not the event written: %+v", len(got)+1, e)
				}
				got = append(got, r.Turn)
			}
			return got, nil
		},
	})
}

// TestTeamRunsWithAllItsStateOnJetStream: inboxes, registry, task board and
// event log all in JetStream; a lead makes a task and spawns three
// teammates whose reports reach it; the state is read back from the
// server, and none of those files is written in the workspace.
func TestTeamRunsWithAllItsStateOnJetStream(t *testing.T) {
	url := natsURL(t)
	const teamName = "whole"
	nc := natsConn(t, url)
	ctx := context.Background()
	mb, err := natsstore.OpenMailbox(ctx, nc, teamName)
	if err != nil {
		t.Fatal(err)
	}
	bdoc, err := natsstore.OpenDocWith(ctx, nc, teamName, "board", board.Empty)
	if err != nil {
		t.Fatal(err)
	}
	events, err := natsstore.OpenEventLog(ctx, nc, teamName)
	if err != nil {
		t.Fatal(err)
	}
	calls := []fakellm.ToolCall{{Name: "task_create", Args: `{"subject":"split the work","description":"three parts"}`}}
	for i := range 3 {
		calls = append(calls, fakellm.ToolCall{Name: "spawn_teammate",
			Args: fmt.Sprintf(`{"name":"w%d","role":"worker","prompt":"do part %d"}`, i, i)})
	}
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: calls}, {Content: "spawned three"}},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" {
			return fakellm.Reply{Content: "reports received"}
		}
		return fakellm.Reply{Content: c.Agent + " finished"}
	})
	srv := fakellm.New(script)
	defer srv.Close()
	tm := newTestTeam(t, srv, Options{MaxWorkers: 3, TeamName: teamName, Mailbox: mb,
		Registry: natsRegistry(t, url, teamName), Board: board.NewOn(bdoc), EventLines: events})

	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := tm.Run(rctx, "split the work in three"); err != nil {
		t.Fatal(err)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
	reports, _, err := mb.ReadAll("lead")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, m := range reports {
		got[m.From]++
	}
	// Read back through a new connection, as another process would.
	cfg, err := natsRegistry(t, url, teamName).Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Teammates) != 3 || cfg.TeamName != teamName {
		t.Fatalf("the registry in the bucket: %+v", cfg)
	}
	for _, m := range cfg.Teammates {
		if m.Status != StatusShutdown {
			t.Errorf("%s: status %s in the bucket, want shutdown", m.Name, m.Status)
		}
		if got[m.Name] != 1 {
			t.Errorf("%s reported %d times, want once", m.Name, got[m.Name])
		}
	}
	bd, err := natsstore.OpenDocWith(ctx, natsConn(t, url), teamName, "board", board.Empty)
	if err != nil {
		t.Fatal(err)
	}
	if f, err := board.NewOn(bd).Read(); err != nil || len(f.Tasks) != 1 || f.Tasks[0].Subject != "split the work" || f.Version != 1 {
		t.Fatalf("the board in the bucket: %+v, %v", f, err)
	}
	lines, err := events.Lines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spawns := 0
	for _, line := range lines {
		var e Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("event line %q: %v", line, err)
		}
		if e.Kind() == EventSpawn {
			spawns++
		}
	}
	if spawns != 3 {
		t.Errorf("the event stream has %d spawn events of %d lines, want 3", spawns, len(lines))
	}
	ws := tm.Workspace()
	for _, p := range []string{ws.RegistryPath(), ws.TasksPath(), ws.EventsPath()} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was written beside JetStream (stat: %v)", p, err)
		}
	}
	if entries, _ := os.ReadDir(ws.InboxDir()); len(entries) != 0 {
		t.Errorf("inbox files written beside the stream: %d", len(entries))
	}
}

var _ OwnerLock = (*natsstore.Owner)(nil)

// natsOwner is team's owner lock on url.
func natsOwner(t *testing.T, url, teamName string) *natsstore.Owner {
	t.Helper()
	ls, err := natsstore.OpenLeases(context.Background(), natsConn(t, url), teamName)
	if err != nil {
		t.Fatal(err)
	}
	return natsstore.NewOwner(ls, teamName, url)
}

// Two Teams on one NATS store, in two workspaces (two hosts): the second
// Open is refused while the first runs, naming its host and pid; the
// lease is free again once the first closes; asks of the first count as
// waiting only while it runs.
func TestOneTeamOnJetStreamRunsInOneProcessAtATime(t *testing.T) {
	url := natsURL(t)
	const teamName = "owned"
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "hi"}))
	defer srv.Close()
	first := newTestTeam(t, srv, Options{TeamName: teamName, Owner: natsOwner(t, url, teamName)})
	ws2, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Workspace: ws2, TeamName: teamName, Owner: natsOwner(t, url, teamName),
		Model: loop.NewClient(loop.ClientConfig{BaseURL: srv.URL(), APIKey: "k"})}
	host, _ := os.Hostname()
	_, err = Open(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "already running team owned") ||
		!strings.Contains(err.Error(), fmt.Sprintf("host %s (pid %d", host, os.Getpid())) {
		t.Fatalf("second Open on the same store: %v, want a refusal naming the host and pid", err)
	}
	watch, err := WatchAsksOn(context.Background(), natsOwner(t, url, teamName))
	if err != nil {
		t.Fatal(err)
	}
	if !watch.Waits(time.Now()) || watch.Waits(time.Now().Add(-time.Hour)) {
		t.Fatalf("with the first team running: an ask of now waits %v, one of an hour ago %v",
			watch.Waits(time.Now()), watch.Waits(time.Now().Add(-time.Hour)))
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if watch, err := WatchAsksOn(context.Background(), natsOwner(t, url, teamName)); err != nil || watch.Waits(time.Now()) {
		t.Fatalf("after Close an ask still waits (%v)", err)
	}
	second, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open after the first closed: %v", err)
	}
	second.Close()
}
