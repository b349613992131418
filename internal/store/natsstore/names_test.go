package natsstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// teamNames are every stream and bucket name of team.
func teamNames(team string) map[string]string {
	return map[string]string{
		"inboxes":  natsstore.StreamName(team),
		"docs":     "KV_" + natsstore.BucketName(team),
		"events":   natsstore.EventStreamName(team),
		"leases":   "KV_" + natsstore.LeaseBucketName(team),
		"sessions": natsstore.SessionStreamName(team),
		"spawn":    natsstore.QueueStreamName(team),
	}
}

// TestATeamNamedLikeAnothersStreamIsRefused: team "x_sessions" would keep
// its inboxes in team x's session stream (StreamName("x_sessions") is
// SessionStreamName("x")). Every way in refuses it before any stream is
// touched, and x's session is intact; a name with '_' elsewhere is fine,
// and no two teams that pass share a name.
func TestATeamNamedLikeAnothersStreamIsRefused(t *testing.T) {
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	if natsstore.StreamName("x_sessions") != natsstore.SessionStreamName("x") {
		t.Fatal("the collision this test is about is gone: rewrite it")
	}
	sessions, err := natsstore.OpenSessions(ctx, nc, "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := sessions.Log("alice").AppendLines(t.Context(), [][]byte{[]byte(`{"role":"user"}`)}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"x_sessions", "x_leases", "x_events", "x_spawn", "x_workers", "x_registry"} {
		if err := natsstore.CheckTeamName(bad); !errors.Is(err, inbox.ErrInvalid) || !strings.Contains(err.Error(), "team x") {
			t.Errorf("CheckTeamName(%q) = %v, want refused naming team x", bad, err)
		}
		if _, err := natsstore.OpenMailbox(ctx, nc, bad); err == nil {
			t.Errorf("team %q opened its inboxes", bad)
		}
		if _, err := natsstore.OpenSessions(ctx, nc, bad); err == nil {
			t.Errorf("team %q opened its sessions", bad)
		}
		if _, err := natsstore.OpenLeases(ctx, nc, bad); err == nil {
			t.Errorf("team %q opened its leases", bad)
		}
		if _, err := natsstore.OpenQueue(ctx, nc, bad); err == nil {
			t.Errorf("team %q opened its work queue", bad)
		}
		if _, err := natsstore.OpenDoc[map[string]any](ctx, nc, bad, "registry"); err == nil {
			t.Errorf("team %q opened its registry", bad)
		}
		if _, err := natsstore.OpenEntries(ctx, nc, bad, "registry", func(string, []byte) any { return nil }); err == nil {
			t.Errorf("team %q opened its registry entries", bad)
		}
		if _, err := natsstore.OpenEventLog(ctx, nc, bad); err == nil {
			t.Errorf("team %q opened its events", bad)
		}
	}
	lines, err := sessions.Log("alice").Lines(t.Context())
	if err != nil || len(lines) != 1 {
		t.Fatalf("x's session after the attempts: %q, %v", lines, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, natsstore.SessionStreamName("x"))
	if err != nil {
		t.Fatal(err)
	}
	if subj := st.CachedInfo().Config.Subjects; len(subj) != 1 || subj[0] != "agentteam.x.session.>" {
		t.Fatalf("x's session stream now takes %q", subj)
	}
	// '_' inside a name is fine; no two of these teams share a name.
	teams := []string{"x", "x_a", "a_x", "x_session", "sessions", "x_sessions_y", "x-sessions", "spawn_x", "default"}
	seen := map[string]string{}
	for _, team := range teams {
		if err := natsstore.CheckTeamName(team); err != nil {
			t.Fatalf("CheckTeamName(%q): %v", team, err)
		}
		for kind, name := range teamNames(team) {
			if other, ok := seen[name]; ok {
				t.Errorf("%s is both %s and team %s's %s", name, other, team, kind)
			}
			seen[name] = "team " + team + "'s " + kind
		}
	}
}
