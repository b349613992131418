package natsstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/natsstore"
	"github.com/agentteam/agentteam/internal/storetest"
)

// sessionsOpener opens team's sessions on url through a new connection
// each call, as another process (or host) would.
func sessionsOpener(url, team string, opts ...natsstore.MailboxOption) storetest.SessionsOpener {
	open := func(t *testing.T) *natsstore.Sessions {
		t.Helper()
		nc := connect(t, url, natsstore.ConnectOptions{})
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
			return open(t).Archive(agent, now)
		},
		Archived: func(t *testing.T, agent string) ([][][]byte, error) {
			arch, err := open(t).Archived(agent)
			var out [][][]byte
			for _, a := range arch {
				out = append(out, a.Lines)
			}
			return out, err
		},
		Tear: func(t *testing.T, agent string, junk []byte) {
			nc := connect(t, url, natsstore.ConnectOptions{})
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
		if err := o.Open(t, name).AppendLines([][]byte{[]byte(`{}`)}); err == nil {
			t.Errorf("appended to the session %q", name)
		}
		if _, err := o.Open(t, name).Lines(); err == nil {
			t.Errorf("read the session %q", name)
		}
	}
}
