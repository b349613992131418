package team

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// unreadBeats are heartbeats a worker holds but whose list it cannot read
// while failing is set (the node it asks has gone away), and that list no
// worker while it is not.
type unreadBeats struct {
	mu      sync.Mutex
	failing bool
}

func (b *unreadBeats) Hold(context.Context, string, []byte) (hosts.Heartbeat, error) {
	return &cutBeat{lost: make(chan struct{})}, nil
}

func (b *unreadBeats) Watch(context.Context) (<-chan hosts.WorkerChange, <-chan struct{}, error) {
	return nil, nil, errors.New("not the lead's process")
}

func (b *unreadBeats) Alive(context.Context) (map[string][]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failing {
		return nil, errors.New("nats: timeout")
	}
	return map[string][]byte{}, nil
}

// A spawn past its placement time is failed only when the heartbeats say
// no live worker offers its labels, not when they cannot be read: a
// 300-teammate failover run lost a teammate ("no worker with the labels
// pool took it within its placement time") while two workers offering
// them were alive, because the look at the heartbeats failed as a NATS
// node stopped. A worker without the label sees the request: while the
// look fails it gives the request back; once the look says nobody offers
// the label, it fails the spawn.
func TestASpawnIsNotFailedWhenTheHeartbeatsCannotBeRead(t *testing.T) {
	url := natsURL(t)
	const teamName = "pl"
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": done"} })
	defer srv.Close()
	_, reg := fenceTeam(t, url, teamName)
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	beats := &unreadBeats{failing: true}
	q := &memQueue{jobs: make(chan *memJob, 4), done: map[string]string{}}
	opts := fenceWorker(t, url, teamName, srv.URL(), ws, q, hosts.Options{ID: "w1", Host: "w1", Beat: time.Millisecond})
	opts.Heartbeats = beats
	w1, err := OpenWorker(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w1.Close(context.Background()) })

	late := string(mustJSON(t, hosts.Request{ID: "s1", Name: "alice", Role: "programmer", From: "lead",
		Labels: []string{"gpu"}, Deadline: time.Now().Add(-time.Second)}))
	answered := func() string {
		t.Helper()
		testkit.Eventually(t, 30*time.Second, "the worker's answer to the request", func() bool { return q.answered(late) != "" })
		q.mu.Lock()
		defer q.mu.Unlock()
		how := q.done[late]
		delete(q.done, late)
		return how
	}
	status := func() registry.Member {
		t.Helper()
		c, err := reg.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return c.Teammates[c.Find("alice")]
	}

	if err := q.Publish(context.Background(), "", []byte(late)); err != nil {
		t.Fatal(err)
	}
	if how := answered(); how != "nak" {
		t.Errorf("with the heartbeats unreadable the request was %s, want given back (nak)", how)
	}
	if m := status(); m.Status != registry.StatusQueued {
		t.Fatalf("with the heartbeats unreadable alice is %s (%s), want still queued", m.Status, m.Error)
	}

	beats.mu.Lock()
	beats.failing = false
	beats.mu.Unlock()
	if err := q.Publish(context.Background(), "", []byte(late)); err != nil {
		t.Fatal(err)
	}
	if how := answered(); how != "term" {
		t.Errorf("with no worker offering gpu the request was %s, want dropped (term)", how)
	}
	if m := status(); m.Status != registry.StatusFailed {
		t.Fatalf("with no worker offering gpu alice is %s, want failed", m.Status)
	}
}
