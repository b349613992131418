package tools

import (
	"context"
	"errors"
	"testing"
)

func TestSpawnTeammate(t *testing.T) {
	env, _, team, _ := testEnv(t)
	s := ForLead(env)
	mustOK(t, s.Call(context.Background(), "spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write hello.go"}`), "Spawned teammate alice (programmer)")
	if len(team.spawned) != 1 || team.spawned[0] != (spawned{"alice", "programmer", "write hello.go"}) {
		t.Fatalf("spawned = %+v", team.spawned)
	}
}

func TestSpawnTeammateRefusals(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"reserved lead", `{"name":"lead","role":"r","prompt":"p"}`, `"lead" is reserved`},
		{"reserved user", `{"name":"user","role":"r","prompt":"p"}`, `"user" is reserved`},
		{"path name", `{"name":"../x","role":"r","prompt":"p"}`, "may only contain"},
		{"empty name", `{"name":"","role":"r","prompt":"p"}`, "agent name is empty"},
		{"empty role", `{"name":"bob","role":" ","prompt":"p"}`, `"role" must not be empty`},
		{"empty prompt", `{"name":"bob","role":"r","prompt":""}`, `"prompt" must not be empty`},
		{"missing prompt", `{"name":"bob","role":"r"}`, `missing required argument "prompt"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, _, team, _ := testEnv(t)
			mustErr(t, ForLead(env).Call(context.Background(), "spawn_teammate", tc.args), tc.want)
			if len(team.spawned) != 0 {
				t.Fatalf("Spawn called for a refused call: %+v", team.spawned)
			}
		})
	}
}

func TestSpawnTeammateSpawnError(t *testing.T) {
	env, _, team, _ := testEnv(t)
	team.spawnErr = errors.New(`name "bob" is taken`)
	mustErr(t, ForLead(env).Call(context.Background(), "spawn_teammate", `{"name":"bob","role":"r","prompt":"p"}`), `could not spawn bob: name "bob" is taken`)
}

func TestListTeammates(t *testing.T) {
	env, _, team, _ := testEnv(t)
	team.describe = "alice  programmer  working"
	mustOK(t, ForLead(env).Call(context.Background(), "list_teammates", ""), "alice  programmer  working")
	team.descErr = errors.New("registry locked")
	mustErr(t, ForLead(env).Call(context.Background(), "list_teammates", "{}"), "internal error: list_teammates: describe team: registry locked")
}
