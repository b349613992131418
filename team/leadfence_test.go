package team

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/fakellm"
	"github.com/agentteam/agentteam/internal/natsstore"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/workspace"
)

// lateOwner is a team's owner lock whose holder never learns that it lost
// it (a process starved or paused past its lease, whose halt comes late):
// what fences it then is the server alone.
type lateOwner struct{ *natsstore.Owner }

func (o lateOwner) Acquire(ctx context.Context) (func(), <-chan struct{}, error) {
	return o.AcquireThen(ctx, nil)
}

func (o lateOwner) AcquireThen(ctx context.Context, then func() error) (func(), <-chan struct{}, error) {
	release, _, err := o.Owner.AcquireThen(ctx, then)
	return release, nil, err
}

// leadTeam opens a lead's team of teamName on url in a workspace of its
// own (another host), with its mailbox and registry on the server.
func leadTeam(t *testing.T, url, teamName string, srv *fakellm.Server, owner OwnerLock) (*Team, error) {
	t.Helper()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mb, err := natsstore.OpenMailbox(context.Background(), natsConn(t, url), teamName)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Workspace: ws, TeamName: teamName, Owner: owner, Mailbox: mb,
		Registry: natsRegistry(t, url, teamName), PollInterval: 50 * time.Millisecond}
	opts.Model = loop.NewClient(loop.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "fake"})
	tm, err := Open(context.Background(), opts)
	if err == nil {
		t.Cleanup(func() { _ = tm.Close() })
	}
	return tm, err
}

// A lead whose owner lock passed to another process sends nothing, even
// before it knows. Lead A holds the lock, renewed on a connection of its
// own, and sends bob a message; that connection is then cut, so the lease
// expires on the server, and A is never told (its halt is late). Lead B
// (`run --resume` on another host) takes the lock. A's next message to bob
// is refused by the server (B claimed the lead's sending with the lock),
// A stops with ErrOwnerLost, and bob has A's first message and B's, not
// A's second.
func TestALeadThatLostItsOwnerLockSendsNothing(t *testing.T) {
	url := natsURL(t)
	const teamName = "leadfence"
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	reg := natsRegistry(t, url, teamName)
	if _, err := reg.Update(func(c *Config) error {
		now := time.Now().UTC()
		c.Teammates = append(c.Teammates, Member{Name: "bob", Role: "reviewer", Status: StatusIdle, CreatedAt: now, UpdatedAt: now})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	var renew *nats.Conn
	ownerA := natsOwner(t, url, teamName).RenewOn(func(context.Context) (*nats.Conn, error) {
		nc, err := nats.Connect(url)
		renew = nc
		return nc, err
	})
	a, err := leadTeam(t, url, teamName, srv, lateOwner{ownerA})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.messenger.Send(ctx, workspace.LeadName, "bob", "first from A"); err != nil {
		t.Fatalf("A's message while it holds the lock: %v", err)
	}

	renew.Close() // A's lease is refreshed no more; A is not told
	var b *Team
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if b, err = leadTeam(t, url, teamName, srv, natsOwner(t, url, teamName)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B could not take the lock A no longer renews: %v", err)
		}
	}
	if err := b.messenger.Send(ctx, workspace.LeadName, "bob", "from B"); err != nil {
		t.Fatalf("B's message: %v", err)
	}

	err = a.messenger.Send(ctx, workspace.LeadName, "bob", "second from A")
	if !errors.Is(err, ErrOwnerLost) {
		t.Errorf("A's message after B took the lock: %v, want it refused with ErrOwnerLost", err)
	}
	if !errors.Is(a.Fault(), ErrOwnerLost) {
		t.Errorf("A's fault after its refused message: %v, want ErrOwnerLost", a.Fault())
	}
	msgs, _, err := b.Mailbox().ReadAll("bob")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		if m.From == workspace.LeadName && m.Type == inbox.TypeMessage {
			got = append(got, m.Content)
		}
	}
	if len(got) != 2 || got[0] != "first from A" || got[1] != "from B" {
		t.Errorf("bob's messages from the lead: %q, want A's first and B's", got)
	}
}
