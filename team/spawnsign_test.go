package team

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/hosts"
)

// A spawn request is taken only as the team's current lead signed it: a
// field changed after signing (the mode made yolo, a claim copied onto
// another request) breaks the signature, and a request of a lead whose
// claim a later lead replaced names a claim that is no longer current.
func TestOnlyTheCurrentLeadsSpawnRequestsAreTaken(t *testing.T) {
	mb, err := natsstore.OpenMailbox(context.Background(), natsConn(t, natsURL(t)), "sign")
	if err != nil {
		t.Fatal(err)
	}
	h := &hosting{t: &Team{opts: Options{Mailbox: mb}}, opts: hosts.Options{ID: "w1"}}
	roundTrip := func(q hosts.Request) hosts.Request { // as it crosses the queue
		var out hosts.Request
		if err := json.Unmarshal(mustJSON(t, q), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	lead := testLead(t, mb)
	req := lead.Sign(hosts.Request{ID: "spawn-alice-1", Name: "alice", Role: "writer", From: "lead", Mode: permission.ModeAsk,
		Labels: []string{"gpu"}, Deny: []string{"bash(rm *)"}, Deadline: time.Now().Add(time.Minute)})
	if err := h.Verify(t.Context(), roundTrip(req)); err != nil {
		t.Fatalf("the lead's own request: %v", err)
	}
	refused := func(what string, q hosts.Request, want string) {
		t.Helper()
		err := h.Verify(t.Context(), roundTrip(q))
		if !errors.As(err, new(*hosts.UnsignedError)) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want a refusal saying %q", what, err, want)
		}
	}
	yolo := req
	yolo.Mode = permission.ModeYolo
	refused("the mode changed", yolo, "signature is not")
	other := req
	other.Name = "mallory"
	refused("the claim and signature copied onto another request", other, "signature is not")
	unsigned := req
	unsigned.Signature = nil
	refused("no signature", unsigned, "no signature")
	testLead(t, mb) // a later lead claims the team
	refused("a request of a lead replaced since", req, "not the team's current one")
}
