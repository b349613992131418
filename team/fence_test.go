package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// A teammate taken over sends nothing. Worker w1 runs alice, whose model
// asks for a command (that waits) and then a send_message to bob; while
// the command runs, alice is taken over as the lead's process does for a
// worker it takes for dead (registry entry queued for a new request), and
// worker w2 runs her on from her conversation: w2's alice says the same to
// bob again (her earlier call was interrupted) and reports. Then w1's
// command ends and w1's alice, who knows nothing of it, sends: the server
// refuses it (her sending was claimed by w2), w1 stops her, and bob has
// the message once — w2's.
func TestATeammateTakenOverSendsNothing(t *testing.T) {
	url := natsURL(t)
	const teamName = "fs"
	dir := t.TempDir()
	started, goOn := filepath.Join(dir, "started"), filepath.Join(dir, "go")
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"alice": {
			{ToolCalls: []fakellm.ToolCall{ // on w1
				{ID: "call_wait", Name: "bash", Args: mustString(t, map[string]string{
					"command": "touch " + started + "; while [ ! -e " + goOn + " ]; do sleep 0.02; done"})},
				{ID: "call_send", Name: "send_message", Args: `{"to":"bob","content":"the parser is done"}`},
			}},
			{ToolCalls: []fakellm.ToolCall{ // on w2, after the interrupted calls
				{ID: "call_send_again", Name: "send_message", Args: `{"to":"bob","content":"the parser is done"}`},
			}},
			{Content: "alice: parser written"},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} }))
	defer srv.Close()
	ctx := context.Background()
	mb, reg := fenceTeam(t, url, teamName, registry.Member{Name: "bob", Role: "reviewer", Status: registry.StatusIdle})
	worker := func(id string, q *memQueue) *Team {
		t.Helper()
		ws, err := workspace.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		tm, err := OpenWorker(ctx, fenceWorker(t, url, teamName, srv.URL(), ws, q, hosts.Options{ID: id, Host: id}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tm.Close(context.Background()) })
		return tm
	}
	request := func(q *memQueue, id string, resume bool) {
		t.Helper()
		data := signedAsLead(t, mb, hosts.Request{ID: id, Name: "alice", Role: "programmer", From: inbox.LeadName,
			Deadline: time.Now().Add(time.Hour), Resume: resume})
		if err := q.Publish(ctx, id, data); err != nil {
			t.Fatal(err)
		}
	}
	fromAlice := func(to string, typ inbox.MessageType) int {
		msgs, _, err := mb.ReadAll(ctx, to)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range msgs {
			if m.From == "alice" && m.Type == typ {
				n++
			}
		}
		return n
	}

	q1 := &memQueue{jobs: make(chan *memJob, 1), done: map[string]string{}}
	w1 := worker("w1", q1)
	if _, ok := w1.Mailbox().(*natsstore.Mailbox); !ok {
		t.Errorf("the team's Mailbox is %T: the views lose what the store offers more (Mark)", w1.Mailbox())
	}
	request(q1, "s1", false)
	testkit.Eventually(t, time.Minute, "a command of alice's on w1", func() bool { _, err := os.Stat(started); return err == nil })

	// Taken over: the registry waits for a new request, which w2 takes.
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		m := &c.Teammates[c.Find("alice")]
		m.Status, m.SpawnID, m.Worker, m.Host = registry.StatusQueued, "s2", "", ""
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	q2 := &memQueue{jobs: make(chan *memJob, 1), done: map[string]string{}}
	worker("w2", q2)
	request(q2, "s2", true)
	testkit.Eventually(t, time.Minute, "a report of alice's from w2", func() bool { return fromAlice(inbox.LeadName, inbox.TypeResult) == 1 })

	// w1's alice goes on: her command ends, and she sends.
	w1.roster.mu.Lock()
	old := w1.roster.members["alice"]
	w1.roster.mu.Unlock()
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case <-old.done:
	case <-time.After(60 * time.Second):
		t.Fatal("w1's alice still runs 60s after her command ended")
	}
	if n := fromAlice("bob", inbox.TypeMessage); n != 1 {
		t.Errorf("bob got %d messages from alice, want 1 (w2's): w1's, sent after the takeover, was delivered", n)
	}
	if !old.fenced.Load() {
		t.Error("w1 did not stop its alice as run elsewhere")
	}
	if n := fromAlice(inbox.LeadName, inbox.TypeResult); n != 1 {
		t.Errorf("the lead got %d reports from alice, want 1 (w2's)", n)
	}
}

func mustString(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// cutBeats are heartbeats a test cuts: each Hold is told on held, and
// its heartbeat is lost when the test closes the channel it was given.
type cutBeats struct{ held chan chan struct{} }

type cutBeat struct{ lost chan struct{} }

func (b *cutBeats) Hold(ctx context.Context, _ string, _ []byte) (hosts.Heartbeat, error) {
	beat := &cutBeat{lost: make(chan struct{})}
	select {
	case b.held <- beat.lost:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return beat, nil
}

func (b *cutBeats) Watch(ctx context.Context) (<-chan hosts.WorkerChange, <-chan struct{}, error) {
	return nil, nil, errors.New("not the lead's process")
}

func (b *cutBeats) Alive(context.Context) (map[string][]byte, error) { return nil, nil }

func (b *cutBeat) Lost() <-chan struct{}         { return b.lost }
func (b *cutBeat) Err() error                    { return errors.New("cut off") }
func (b *cutBeat) Release(context.Context) error { return nil }

// A teammate fenced by a network blip does not stay working. Worker w1
// runs alice, working (her model has not answered yet), when it loses its
// heartbeat: it stops her without a word to the store, and takes a new
// heartbeat once it can. No lead's process saw the heartbeat gone (it
// came back before anyone looked), so nobody else would respawn her: the
// registry must not go on saying w1 runs her. w1 respawns her itself,
// guarded by its claim (a worker publishes no spawn request: only the lead
// signs them): she goes on from her conversation on w1, reports once, and
// ends idle under the new claim.
func TestATeammateFencedByABlipDoesNotStayWorking(t *testing.T) {
	fencedByABlip(t, false)
}

// The same blip, but the lead's process saw the heartbeat gone and
// respawned alice first: w1, holding a heartbeat again, leaves her entry
// alone (its claim is no longer hers), so she is respawned once.
func TestAGivenBackTeammateTheLeadRespawnedIsLeftAlone(t *testing.T) {
	fencedByABlip(t, true)
}

func fencedByABlip(t *testing.T, leadFirst bool) {
	url := natsURL(t)
	const teamName = "fb"
	answer := make(chan struct{})
	defer func() {
		select {
		case <-answer:
		default:
			close(answer)
		}
	}()
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" && c.N == 0 {
			<-answer // w1 is cut off meanwhile; this answer is never used
			return fakellm.Reply{Content: "alice: too late"}
		}
		return fakellm.Reply{Content: c.Agent + ": parser written"}
	}))
	defer srv.Close()
	ctx := context.Background()
	mb, reg := fenceTeam(t, url, teamName)
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	beats := &cutBeats{held: make(chan chan struct{})}
	q := &memQueue{jobs: make(chan *memJob, 4), done: map[string]string{}}
	opts := fenceWorker(t, url, teamName, srv.URL(), ws, q, hosts.Options{ID: "w1", Host: "w1", Beat: 20 * time.Millisecond})
	opts.Heartbeats = beats
	opened := make(chan *Team, 1)
	go func() {
		tm, err := OpenWorker(ctx, opts)
		if err != nil {
			t.Error(err)
		}
		opened <- tm
	}()
	first := <-beats.held // OpenWorker holds its heartbeat before it returns
	w1 := <-opened
	if w1 == nil {
		t.FailNow()
	}
	t.Cleanup(func() { _ = w1.Close(context.Background()) })
	if err := q.Publish(ctx, "s1", signedAsLead(t, mb, hosts.Request{ID: "s1", Name: "alice", Role: "programmer", From: inbox.LeadName,
		Deadline: time.Now().Add(time.Hour)})); err != nil {
		t.Fatal(err)
	}
	alice := func() registry.Member {
		c, err := reg.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return c.Teammates[c.Find("alice")]
	}
	aliceIs := func() string { return fmt.Sprintf("alice is %+v", alice()) }
	testkit.EventuallyF(t, 30*time.Second, "alice working on w1", func() bool {
		m := alice()
		return m.Status == registry.StatusWorking && m.Worker == "w1" && len(srv.Requests("alice")) == 1
	}, aliceIs)
	close(first) // the blip: w1 stops alice, then holds a heartbeat again
	if leadFirst {
		testkit.EventuallyF(t, 30*time.Second, "w1 to stop alice", func() bool { return !w1.roster.runs("alice") }, aliceIs)
		// As reapDead: queued for a request of the lead's, on no worker yet.
		if err := reg.Change(t.Context(), func(c *registry.Config) error {
			m := &c.Teammates[c.Find("alice")]
			m.Status, m.SpawnID, m.Worker, m.Host = registry.StatusQueued, "s2", "", ""
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		second := <-beats.held
		close(second) // once w1 holds a third, it has given back what it would
		<-beats.held
		close(answer)
		if m := alice(); m.Status != registry.StatusQueued || m.SpawnID != "s2" || m.Worker != "" {
			t.Fatalf("w1 changed alice after the lead respawned her: %+v", m)
		}
		return
	}
	<-beats.held
	close(answer)
	testkit.EventuallyF(t, 30*time.Second, "alice respawned and idle", func() bool {
		m := alice()
		return m.Status == registry.StatusIdle && m.SpawnID != "s1" && m.Worker == "w1"
	}, aliceIs)
	msgs, _, err := mb.ReadAll(ctx, inbox.LeadName)
	if err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, m := range msgs {
		if m.From == "alice" && m.Type == inbox.TypeResult {
			results++
			if m.Content != "alice: parser written" {
				t.Errorf("alice reported %q", m.Content)
			}
		}
	}
	if results != 1 {
		t.Errorf("alice reported %d times, want once", results)
	}
}

// fenceTeam is a team on url whose registry has alice queued for request
// s1 (and others), with her prompt in her inbox.
func fenceTeam(t *testing.T, url, teamName string, others ...registry.Member) (*natsstore.Mailbox, *registry.Registry) {
	t.Helper()
	mb, err := natsstore.OpenMailbox(context.Background(), natsConn(t, url), teamName)
	if err != nil {
		t.Fatal(err)
	}
	reg := natsRegistry(t, url, teamName)
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		now := time.Now().UTC()
		c.Teammates = append(c.Teammates, registry.Member{Name: "alice", Role: "programmer", Status: registry.StatusQueued, SpawnID: "s1", CreatedAt: now, UpdatedAt: now})
		for _, m := range others {
			m.CreatedAt, m.UpdatedAt = now, now
			c.Teammates = append(c.Teammates, m)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: inbox.LeadName, Content: "write the parser"}); err != nil {
		t.Fatal(err)
	}
	return mb, reg
}

// fenceWorker are the options of a worker of teamName on url, in ws, with
// every store on JetStream and the fake model at model.
func fenceWorker(t *testing.T, url, teamName, model string, ws *workspace.Workspace, q *memQueue, w hosts.Options) Options {
	t.Helper()
	mb, err := natsstore.OpenMailbox(context.Background(), natsConn(t, url), teamName)
	if err != nil {
		t.Fatal(err)
	}
	return Options{
		Workspace:    ws,
		TeamName:     teamName,
		Model:        llm.NewClient(llm.ClientConfig{BaseURL: model, APIKey: "k", Model: "fake"}),
		PollInterval: 50 * time.Millisecond,
		Mailbox:      mb,
		Registry:     natsRegistry(t, url, teamName),
		Sessions:     natsSessions(t, url, teamName),
		Queue:        q,
		Worker:       w,
	}
}
