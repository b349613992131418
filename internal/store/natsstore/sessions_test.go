package natsstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/store/storetest"
)

// sessionsOpener opens team's sessions on url through a new connection
// each call, as another process (or host) would.
func sessionsOpener(url, team string, opts ...natsstore.MailboxOption) storetest.SessionsOpener {
	open := func(t *testing.T) *natsstore.Sessions {
		t.Helper()
		nc := connect(t, url, natsconn.ConnectOptions{})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := natsstore.OpenSessions(ctx, nc, team, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return storetest.SessionsOpener{
		Open: func(t *testing.T, agent string) storetest.SessionLog { return open(t).Log(agent) },
		Archive: func(t *testing.T, agent string, now time.Time) error {
			return open(t).Archive(t.Context(), agent, now)
		},
		Archived: func(t *testing.T, agent string) ([][][]byte, error) {
			arch, err := open(t).Archived(t.Context(), agent)
			var out [][][]byte
			for _, a := range arch {
				out = append(out, a.Lines)
			}
			return out, err
		},
		Tear: func(t *testing.T, agent string, junk []byte) {
			nc := connect(t, url, natsconn.ConnectOptions{})
			if _, err := nc.Request(natsstore.SessionSubject(team, agent), junk, 5*time.Second); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestJetStreamKeepsTheSessionContract(t *testing.T) {
	storetest.RunSessions(t, sessionsOpener(startServer(t), "s1"))
}

// The session contract on a 3-node cluster, the stream on all three.
func TestClusterKeepsTheSessionContract(t *testing.T) {
	c := startCluster(t)
	storetest.RunSessions(t, sessionsOpener(c.urls, "s3", natsstore.Replicas(3)))
}

// Names that are no subject token reach no session.
func TestSessionsRefuseHostileNames(t *testing.T) {
	o := sessionsOpener(startServer(t), "s2")
	for _, name := range []string{"", "a.b", "*", ">", "a b", "../x", "alice.archived"} {
		if err := o.Open(t, name).AppendLines(t.Context(), [][]byte{[]byte(`{}`)}); err == nil {
			t.Errorf("appended to the session %q", name)
		}
		if _, err := o.Open(t, name).Lines(t.Context()); err == nil {
			t.Errorf("read the session %q", name)
		}
	}
}

// An append larger than the server's largest message is stored as several
// messages of whole lines, read back as one append; a single line over it
// is refused with a sentence, and nothing of it is stored.
func TestASessionAppendOverTheLargestMessageIsSplit(t *testing.T) {
	url := startServer(t)
	o := sessionsOpener(url, "big")
	l := o.Open(t, "alice")
	maxPayload := int(connect(t, url, natsconn.ConnectOptions{}).MaxPayload())
	var lines [][]byte
	for i := range 5 {
		lines = append(lines, []byte(fmt.Sprintf(`{"role":"user","content":"%d %s"}`, i, strings.Repeat("x", maxPayload/3))))
	}
	if err := l.AppendLines(t.Context(), lines); err != nil {
		t.Fatal(err)
	}
	got, err := o.Open(t, "alice").Lines(t.Context())
	if err != nil || len(got) != len(lines) {
		t.Fatalf("read back %d lines, %v; want %d", len(got), err, len(lines))
	}
	for i := range lines {
		if string(got[i]) != string(lines[i]) {
			t.Fatalf("line %d differs", i)
		}
	}
	huge := []byte(`{"role":"user","content":"` + strings.Repeat("y", maxPayload) + `"}`)
	if err := l.AppendLines(t.Context(), [][]byte{huge}); err == nil || !strings.Contains(err.Error(), "max_payload") {
		t.Fatalf("a line over the largest message: %v", err)
	}
	if got, _ := o.Open(t, "alice").Lines(t.Context()); len(got) != len(lines) {
		t.Fatalf("after the refused line the conversation has %d lines, want %d", len(got), len(lines))
	}
}

// TestAClaimedSessionRefusesTheEarlierWriter: a conversation claimed by a
// second writer (a respawn) refuses every later append of the first, even
// one it sends after the claim; the second goes on, and the conversation
// has the first's lines up to the claim and then only the second's.
func TestAClaimedSessionRefusesTheEarlierWriter(t *testing.T) {
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	s, err := natsstore.OpenSessions(ctx, nc, "fence")
	if err != nil {
		t.Fatal(err)
	}
	old, respawn := s.Log("alice"), s.Log("alice")
	if err := old.Claim(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := old.AppendLines(t.Context(), [][]byte{[]byte(`"one"`)}); err != nil {
		t.Fatal(err)
	}
	if err := respawn.Claim(t.Context()); err != nil {
		t.Fatal(err)
	}
	err = old.AppendLines(t.Context(), [][]byte{[]byte(`"stale"`)})
	var fenced *natsstore.FencedError
	if !errors.As(err, &fenced) {
		t.Fatalf("the earlier writer's append after the claim: %v, want refused as fenced", err)
	}
	if err := respawn.AppendLines(t.Context(), [][]byte{[]byte(`"two"`)}); err != nil {
		t.Fatal(err)
	}
	lines, err := s.Log("alice").Lines(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(bytes.Join(lines, []byte(","))); got != `"one","two"` {
		t.Fatalf("the conversation: %s, want \"one\",\"two\"", got)
	}
}
