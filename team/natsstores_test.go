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
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/store/storetest"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

var (
	_ registry.RegistryStore = (*natsstore.Doc[*registry.Config])(nil)
	_ board.Store            = (*natsstore.Doc[*board.File])(nil)
	_ event.EventLines       = (*natsstore.EventLog)(nil)
)

// natsURL starts an embedded JetStream server on 127.0.0.1 for t.
func natsURL(t *testing.T) string {
	t.Helper()
	s, err := natsserver.StartLocal(t.TempDir())
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

// natsRegistry is the registry of teamName on url as a process opens it:
// an entry per teammate (team/registry/entries.go), on a connection of its own.
func natsRegistry(t *testing.T, url, teamName string) *registry.Registry {
	t.Helper()
	return entriesRegistry(t, natsConn(t, url), teamName, nil)
}

// entriesRegistry is the registry of teamName in entries on nc, carrying
// old over.
func entriesRegistry(t *testing.T, nc *nats.Conn, teamName string, old registry.RegistryStore) *registry.Registry {
	t.Helper()
	e, err := natsstore.OpenEntries(context.Background(), nc, teamName, "registry", registry.DecodeRegistryEntry)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	r, err := registry.NewRegistryOnEntries(t.Context(), e, teamName, old)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The registry on a KV entry keeps the same contract as on a file.
func TestRegistryOnJetStreamKeepsTheDocContract(t *testing.T) {
	testkit.SkipShort(t)
	url := natsURL(t)
	storetest.RunDoc(t, storetest.DocOpener[registry.Config]{
		Open: func(t *testing.T) storetest.Doc[registry.Config] { return registryDoc{natsRegistry(t, url, "reg")} },
		Inc: func(c *registry.Config) {
			i := c.Find("counter")
			if i < 0 {
				c.Teammates = append(c.Teammates, registry.Member{Name: "counter"})
				i = len(c.Teammates) - 1
			}
			c.Teammates[i].Turns++
		},
		Count: func(c registry.Config) int {
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
			log := event.NewEventLogTo(open(t), nil)
			return func(n int) { log.Emit(event.Event{Agent: "alice", Payload: event.Reply{Text: long, Turn: n}}) }
		},
		Read: func(t *testing.T) ([]int, error) {
			lines, err := open(t).Lines(context.Background())
			if err != nil {
				return nil, err
			}
			var got []int
			for _, line := range lines {
				var e event.Event
				if err := json.Unmarshal(line, &e); err != nil {
					return got, fmt.Errorf("line %d: %w", len(got)+1, err)
				}
				r, ok := e.Payload.(event.Reply)
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
		Registry: natsRegistry(t, url, teamName), Board: board.NewOn(bdoc), EventLines: events,
		Sessions: natsSessions(t, url, teamName), Owner: natsOwner(t, url, teamName)})

	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := tm.Run(rctx, "split the work in three"); err != nil {
		t.Fatal(err)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
	reports, _, err := mb.ReadAll(ctx, "lead")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, m := range reports {
		got[m.From]++
	}
	// Read back through a new connection, as another process would.
	cfg, err := natsRegistry(t, url, teamName).Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Teammates) != 3 || cfg.TeamName != teamName {
		t.Fatalf("the registry in the bucket: %+v", cfg)
	}
	for _, m := range cfg.Teammates {
		if m.Status != registry.StatusShutdown {
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
	if f, err := board.NewOn(bd).Read(t.Context()); err != nil || len(f.Tasks) != 1 || f.Tasks[0].Subject != "split the work" || f.Version != 1 {
		t.Fatalf("the board in the bucket: %+v, %v", f, err)
	}
	lines, err := events.Lines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	spawns := 0
	for _, line := range lines {
		var e event.Event
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("event line %q: %v", line, err)
		}
		if e.Kind() == event.EventSpawn {
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
	// The teammates' conversations are in the session stream, not files;
	// the lead's is a file of the workspace it ran in.
	for i := range 3 {
		name := fmt.Sprintf("w%d", i)
		if _, err := os.Stat(ws.SessionPath(name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s's session file was written beside the stream (stat: %v)", name, err)
		}
		lines, err := natsSessions(t, url, teamName).SessionLog(name).Lines(t.Context())
		if err != nil || len(lines) < 2 || !strings.Contains(string(lines[len(lines)-1]), name+" finished") {
			t.Errorf("%s's conversation in the stream: %d lines, %v", name, len(lines), err)
		}
	}
	if _, err := os.Stat(ws.SessionPath("lead")); err != nil {
		t.Errorf("the lead's session file: %v", err)
	}
}

// natsSessionStore is natsstore.Sessions as the team's SessionStore.
type natsSessionStore struct{ *natsstore.Sessions }

func (s natsSessionStore) SessionLog(name string) loop.SessionLog { return s.Log(name) }

// natsSessions is team's session stream on url, through a new connection.
func natsSessions(t *testing.T, url, teamName string) SessionStore {
	t.Helper()
	s, err := natsstore.OpenSessions(context.Background(), natsConn(t, url), teamName)
	if err != nil {
		t.Fatal(err)
	}
	return natsSessionStore{s}
}

// The "resume on another host" case: a teammate's conversation written by
// a Team in one workspace is resumed by a second Team opened in another
// workspace directory on the same store. A message sent while no team ran
// is delivered into the resumed conversation once (the inbox consumer's
// ack floor), the model sees the earlier conversation, and no session file
// is written in either directory.
func TestATeammateResumesFromTheStoreInAnotherWorkspace(t *testing.T) {
	url := natsURL(t)
	const teamName = "moved"
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"alice": {{Content: "done one"}, {Content: "done two"}},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} }))
	defer srv.Close()
	open := func(resume bool, on func(event.Event)) *Team {
		t.Helper()
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
		ws, err := workspace.Open(t.TempDir()) // each Team its own directory: another host
		if err != nil {
			t.Fatal(err)
		}
		tm, err := Open(ctx, Options{Workspace: ws, TeamName: teamName, Resume: resume, OnEvent: on,
			PollInterval: 50 * time.Millisecond, Mailbox: mb, Registry: natsRegistry(t, url, teamName),
			Board: board.NewOn(bdoc), EventLines: events, Sessions: natsSessions(t, url, teamName),
			Owner: natsOwner(t, url, teamName),
			Model: llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k"})})
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	w := newStatusWatcher()
	first := open(false, w.on)
	if err := first.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "first task"}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", string(registry.StatusIdle))
	first.Abort("the host went away")
	firstDir := first.Workspace()
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// While no team runs, a message for alice (agentteam send elsewhere).
	mb, err := natsstore.OpenMailbox(context.Background(), natsConn(t, url), teamName)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "second task"}); err != nil {
		t.Fatal(err)
	}

	second := open(true, nil)
	defer second.Close(context.Background())
	if second.Workspace().Root == firstDir.Root {
		t.Fatal("the second team is in the first one's directory")
	}
	var conv []openai.ChatCompletionMessage
	testkit.EventuallyF(t, 30*time.Second, "the resumed alice's answer to the second task", func() bool {
		second.roster.mu.Lock()
		m := second.roster.members["alice"]
		second.roster.mu.Unlock()
		if m == nil || m.agent == nil {
			return false
		}
		conv = m.agent.Messages()
		n := len(conv)
		return n > 0 && conv[n-1].Content == "done two"
	}, func() string { return fmt.Sprintf("her conversation: %+v", conv) })
	count := func(text string) int {
		n := 0
		for _, m := range conv {
			n += strings.Count(m.Content, text)
		}
		return n
	}
	for _, text := range []string{"first task", "done one", "second task", "done two"} {
		if count(text) != 1 {
			t.Errorf("%q is %d times in alice's resumed conversation, want once:\n%+v", text, count(text), conv)
		}
	}
	// The model was asked with the conversation of the first host.
	var last openai.ChatCompletionRequest
	for _, c := range srv.Calls() {
		if c.Agent == "alice" {
			last = c.Req
		}
	}
	saw := false
	for _, m := range last.Messages {
		saw = saw || m.Content == "done one"
	}
	if !saw {
		t.Errorf("alice's request on the second host lacks her earlier answer: %+v", last.Messages)
	}
	if has, err := mb.HasUnread(t.Context(), "alice"); err != nil || has {
		t.Errorf("alice's inbox after the resume: unread %v, %v", has, err)
	}
	lines, err := natsSessions(t, url, teamName).SessionLog("alice").Lines(t.Context())
	if err != nil || len(lines) != len(conv) {
		t.Errorf("alice's conversation in the stream has %d lines (%v), in memory %d", len(lines), err, len(conv))
	}
	for _, dir := range []string{firstDir.SessionPath("alice"), second.Workspace().SessionPath("alice")} {
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a session file %s was written (stat: %v)", dir, err)
		}
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
}

var _ registry.OwnerLock = (*natsstore.Owner)(nil)

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
		Model: llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k"})}
	host, _ := os.Hostname()
	_, err = Open(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "already running team owned") ||
		!strings.Contains(err.Error(), fmt.Sprintf("host %s (pid %d", host, os.Getpid())) {
		t.Fatalf("second Open on the same store: %v, want a refusal naming the host and pid", err)
	}
	watch, err := registry.WatchAsksOn(context.Background(), natsOwner(t, url, teamName))
	if err != nil {
		t.Fatal(err)
	}
	if !watch.Waits(time.Now()) || watch.Waits(time.Now().Add(-time.Hour)) {
		t.Fatalf("with the first team running: an ask of now waits %v, one of an hour ago %v",
			watch.Waits(time.Now()), watch.Waits(time.Now().Add(-time.Hour)))
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if watch, err := registry.WatchAsksOn(context.Background(), natsOwner(t, url, teamName)); err != nil || watch.Waits(time.Now()) {
		t.Fatalf("after Close an ask still waits (%v)", err)
	}
	second, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("Open after the first closed: %v", err)
	}
	second.Close(context.Background())
}
