package tools

import (
	"context"
	"errors"
	"testing"
)

func TestHandoffToolIsForEveryAgent(t *testing.T) {
	env, _, _, _ := testEnv(t)
	env.Protocols = &fakeProtocols{}
	if !ForLead(env).Has(HandoffName) || !ForTeammate(env).Has(HandoffName) {
		t.Fatal("handoff is missing from the lead's or a teammate's tools")
	}
	env.Protocols = nil
	if ForTeammate(env).Has(HandoffName) {
		t.Fatal("handoff without Protocols")
	}
}

func TestHandoffToolCalls(t *testing.T) {
	env, _, _, _ := testEnv(t)
	p := &fakeProtocols{}
	env.Agent, env.Protocols = "alice", p
	ctx := context.Background()
	mate := ForTeammate(env)
	mustOK(t, mate.Call(ctx, HandoffName, `{"to":"bob","task":"t3","reason":"switching","context":"half done"}`), "handed")
	if len(p.calls) != 1 || p.calls[0] != (protoCall{"Handoff", "alice", "bob", false, "t3|switching|half done"}) {
		t.Fatalf("calls %+v", p.calls)
	}
	for _, c := range []struct{ args, want string }{
		{`{"to":"bob","task":"t3","reason":"r"}`, `missing required argument "context"`},
		{`{"to":"bob","task":" ","reason":"r","context":"c"}`, `"task" must not be empty`},
		{`{"to":"../x","task":"t3","reason":"r","context":"c"}`, "may only contain"},
		{`{"to":"alice","task":"t3","reason":"r","context":"c"}`, "yourself"},
	} {
		mustErr(t, mate.Call(ctx, HandoffName, c.args), c.want)
	}
	if len(p.calls) != 1 {
		t.Fatalf("a bad call reached the protocol: %+v", p.calls)
	}
	p.err = errors.New("bob is busy")
	mustErr(t, mate.Call(ctx, HandoffName, `{"to":"bob","task":"t3","reason":"r","context":"c"}`), "bob is busy")
}
