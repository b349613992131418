package team

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// countingMailbox counts the messages of one inbox that its reads hand
// back (whole, on from a place, or unread), whoever reads.
type countingMailbox struct {
	Mailbox
	name string
	n    *atomic.Int64
}

func (c countingMailbox) ReadAll(ctx context.Context, name string) ([]inbox.Message, []inbox.BadLine, error) {
	msgs, bad, err := c.Mailbox.ReadAll(ctx, name)
	if name == c.name {
		c.n.Add(int64(len(msgs)))
	}
	return msgs, bad, err
}

func (c countingMailbox) ReadSince(ctx context.Context, name string, since inbox.Since) ([]inbox.Message, inbox.Since, error) {
	msgs, next, err := c.Mailbox.ReadSince(ctx, name, since)
	if name == c.name {
		c.n.Add(int64(len(msgs)))
	}
	return msgs, next, err
}

func (c countingMailbox) ReadUnread(ctx context.Context, name string) (inbox.Batch, error) {
	b, err := c.Mailbox.ReadUnread(ctx, name)
	if name == c.name {
		c.n.Add(int64(len(b.Messages)))
	}
	return b, err
}

// natsQueue is natsstore's work queue as the team takes it (as cmd's).
type natsQueue struct{ q *natsstore.Queue }

func (q natsQueue) Publish(ctx context.Context, id string, data []byte) error {
	return q.q.Publish(ctx, id, data)
}

func (q natsQueue) Next(ctx context.Context) (hosts.QueueJob, error) {
	j, err := q.q.Next(ctx)
	if err != nil {
		return nil, err
	}
	return j, nil
}

// The team's end with K teammates on another worker reads each message
// of the lead's inbox a bounded number of times, not once per teammate:
// the lead's process asks each teammate without reading the lead's inbox
// whole, and the worker adopts each request reading on from where it last
// read. A lead and a worker in one test, each on its own connection to
// an embedded JetStream server, with a workspace each; the role's label
// only the worker offers sends every teammate there. The old code read
// the lead's inbox whole per teammate in both processes (over K² = 900
// messages for K = 30); the bound is 8K.
func TestRemoteShutdownReadsTheLeadsInboxLinearly(t *testing.T) {
	const k, teamName = 30, "scale"
	url := natsURL(t)
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": done"} })
	defer srv.Close()
	var leadReads atomic.Int64
	opts := func(ws *workspace.Workspace) Options {
		nc := natsConn(t, url)
		mb, err := natsstore.OpenMailbox(context.Background(), nc, teamName)
		if err != nil {
			t.Fatal(err)
		}
		q, err := natsstore.OpenQueue(context.Background(), nc, teamName)
		if err != nil {
			t.Fatal(err)
		}
		return Options{
			Workspace: ws, TeamName: teamName, MaxWorkers: 10, MaxQueue: k,
			Model: llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "fake", Stream: true,
				BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond}),
			PollInterval: 50 * time.Millisecond, ShutdownTimeout: 30 * time.Second,
			Mailbox:  countingMailbox{Mailbox: mb, name: inbox.LeadName, n: &leadReads},
			Registry: entriesRegistry(t, nc, teamName, nil),
			Queue:    natsQueue{q},
		}
	}
	newWS := func() *workspace.Workspace {
		ws, err := workspace.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
	lo := opts(newWS())
	lo.RoleLabels = map[string][]string{"far": {"far"}}
	lo.Worker = hosts.Options{ID: "leads"}
	lead := newTestTeam(t, srv, lo)
	wo := opts(newWS())
	wo.Worker = hosts.Options{ID: "far1", Labels: []string{"far"}}
	worker, err := OpenWorker(context.Background(), wo)
	if err != nil {
		t.Fatal(err)
	}
	defer worker.Close(context.Background())

	for i := range k {
		if err := lead.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: fmt.Sprintf("m%02d", i), Role: "far", Prompt: "say done"}); err != nil {
			t.Fatal(err)
		}
	}
	// Every teammate ran on the worker, reported to the lead and is idle.
	idle := 0
	testkit.EventuallyF(t, 90*time.Second, "every teammate idle on the worker and reported", func() bool {
		c, err := lead.reg.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		idle = 0
		for _, m := range c.Teammates {
			if m.Status == registry.StatusIdle && m.Worker == "far1" {
				idle++
			}
		}
		msgs, _, err := lead.store.ReadAll(t.Context(), inbox.LeadName)
		return err == nil && idle == k && len(msgs) >= k
	}, func() string { return fmt.Sprintf("%d of %d teammates idle on the worker", idle, k) })

	leadReads.Store(0)
	lead.ShutdownAll("the run is over")
	read := leadReads.Load()

	c, err := lead.reg.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Teammates {
		if m.Status != registry.StatusShutdown {
			t.Errorf("%s is %s after the team's end, want shutdown", m.Name, m.Status)
		}
	}
	all, _, err := lead.store.ReadAll(t.Context(), inbox.LeadName)
	if err != nil {
		t.Fatal(err)
	}
	responses := 0
	for _, m := range all {
		if m.Type == protocol.TypeShutdownResponse {
			responses++
		}
	}
	if responses != k {
		t.Errorf("%d shutdown responses in the lead's inbox, want %d", responses, k)
	}
	t.Logf("the shutdown of %d teammates on a worker read %d messages of the lead's inbox (%d there)", k, read, len(all))
	if read > 8*k {
		t.Errorf("the shutdown read %d messages of the lead's inbox, over 8 × %d teammates: the inbox is read whole per teammate", read, k)
	}
}

// unreadAsking counts HasUnread calls.
type unreadAsking struct {
	Mailbox
	n *atomic.Int64
}

func (u unreadAsking) HasUnread(ctx context.Context, name string) (bool, error) {
	u.n.Add(1)
	return u.Mailbox.HasUnread(ctx, name)
}

// While a teammate on another worker works, the lead's look at whether the
// team settled asks no inbox: the registry's statuses say no. The old look
// asked the inbox of every idle teammate listed before the working one, at
// every wake of the lead (K requests to the store each, 40 here).
func TestRemoteSettledAsksNoInboxWhileOneWorks(t *testing.T) {
	const k = 40
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "done"} })
	defer srv.Close()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int64
	tm := newTestTeam(t, srv, Options{Workspace: ws, Queue: &memQueue{jobs: make(chan *memJob, 1), done: map[string]string{}},
		Mailbox: unreadAsking{Mailbox: inbox.NewStore(ws.InboxDir()), n: &asked}})
	now := time.Now().UTC()
	if err := tm.reg.Change(t.Context(), func(c *registry.Config) error {
		for i := range k {
			c.Teammates = append(c.Teammates, registry.Member{Name: fmt.Sprintf("m%02d", i), Role: "far", Status: registry.StatusIdle,
				CreatedAt: now, UpdatedAt: now, Worker: "far1", Host: "far"})
		}
		c.Teammates = append(c.Teammates, registry.Member{Name: "busy", Role: "far", Status: registry.StatusWorking, CreatedAt: now, UpdatedAt: now, Worker: "far1", Host: "far"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	asked.Store(0)
	if tm.hosting.remoteSettled(t.Context()) {
		t.Fatal("settled while a teammate on another worker works")
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the look asked %d inboxes whether they hold unread messages while a teammate works, want none", n)
	}
	// Once none works, each idle one's inbox is asked (a message may wait there).
	if err := tm.reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates[c.Find("busy")].Status = registry.StatusIdle
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.store.Append(t.Context(), "m07", inbox.Message{Type: inbox.TypeMessage, From: inbox.LeadName, Content: "one more"}); err != nil {
		t.Fatal(err)
	}
	if tm.hosting.remoteSettled(t.Context()) {
		t.Error("settled while an idle teammate on another worker has an unread message")
	}
}
