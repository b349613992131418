package team

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/workspace"
)

// The lead's process relays the person the asks of a teammate on another
// worker and looks, at every poll, whether each is answered in the
// teammate's inbox. That inbox is read on from the last look, not whole
// per ask per poll: with n messages in it, k asks shown and p polls (one
// new message each), the look reads about n+p messages where the old code
// read k·p·n (here 10·20·200 = 40,000); the bound is 2(n+p). The answer
// given meanwhile is still found, first one first.
func TestRemoteAsksReadTheTeammatesInboxLinearly(t *testing.T) {
	const n, k, p = 200, 10, 20
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "ok"} })
	defer srv.Close()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	store := inbox.NewStore(ws.InboxDir())
	var reads atomic.Int64
	lead := newTestTeam(t, srv, Options{
		Workspace:    ws,
		PollInterval: time.Hour, // the test's looks are the only polls
		Mailbox:      countingMailbox{Mailbox: store, name: "alice", n: &reads},
		Queue:        &memQueue{jobs: make(chan *memJob, 1), done: map[string]string{}},
		Worker:       WorkerOptions{ID: "leads"},
		Permissions:  &PermissionOptions{Delegate: DelegateUser, Person: true},
	})
	appendTo := func(to string, m inbox.Message, payload any) {
		t.Helper()
		if payload != nil {
			raw, err := json.Marshal(payload)
			if err != nil {
				t.Fatal(err)
			}
			m.Payload = raw
		}
		m.To = to
		if _, err := store.Append(to, m); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n {
		appendTo("alice", inbox.Message{Type: inbox.TypeMessage, From: workspace.LeadName, Content: fmt.Sprintf("note %d", i)}, nil)
	}
	for i := range k {
		id := fmt.Sprintf("permission-w9-%d", i)
		appendTo(workspace.UserName, inbox.Message{Type: TypePermissionRequest, From: "alice", CorrelationID: id, Content: "may I?"},
			PermissionPayload{RequestID: id, Tool: "bash", Command: "make", Worker: "w9", Deadline: time.Now().Add(time.Hour)})
	}
	yes, no := true, false
	closed := map[string]bool{}
	for i := range p {
		if i == p/2 { // the person answers one ask twice: the first answer counts
			for _, a := range []*bool{&yes, &no} {
				appendTo("alice", inbox.Message{Type: TypePermissionResponse, From: workspace.UserName, CorrelationID: "permission-w9-3"},
					PermissionPayload{RequestID: "permission-w9-3", Approve: a, By: workspace.UserName})
			}
		}
		lead.perms.lookRemoteAsks(time.Now(), closed)
		appendTo("alice", inbox.Message{Type: inbox.TypeMessage, From: workspace.LeadName, Content: fmt.Sprintf("later %d", i)}, nil)
	}
	if got := len(lead.perms.remotePending()); got != k-1 {
		t.Errorf("%d asks shown as pending, want %d (one answered)", got, k-1)
	}
	if !closed["permission-w9-3"] {
		t.Error("the answered ask was not closed")
	}
	if r, ok := findPermissionResponse(lead.indexes, "alice", "permission-w9-3", ""); !ok || r.Approve == nil || !*r.Approve {
		t.Errorf("the first answer (allow) is not the one found: %+v, %v", r, ok)
	}
	t.Logf("%d messages of alice's inbox read by %d looks at %d asks", reads.Load(), p, k)
	if got, bound := reads.Load(), int64(2*(n+p)); got > bound {
		t.Errorf("the looks read %d messages of alice's inbox, over %d: it is read whole per ask and poll", got, bound)
	}
}
