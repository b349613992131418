package team

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/fault"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
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
func leadTeam(t *testing.T, url, teamName string, srv *fakellm.Server, owner registry.OwnerLock) (*Team, error) {
	t.Helper()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mb, err := natsstore.OpenMailbox(context.Background(), natsConn(t, url), teamName)
	if err != nil {
		t.Fatal(err)
	}
	bdoc, err := natsstore.OpenDocWith(context.Background(), natsConn(t, url), teamName, "board", board.Empty)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Workspace: ws, TeamName: teamName, Owner: owner, Mailbox: mb, Board: board.NewOn(bdoc),
		Registry: natsRegistry(t, url, teamName), PollInterval: 50 * time.Millisecond}
	opts.Model = llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "fake"})
	tm, err := Open(context.Background(), opts)
	if err == nil {
		t.Cleanup(func() { _ = tm.Close(context.Background()) })
	}
	return tm, err
}

// A lead whose owner lock passed to another process sends nothing, even
// before it knows. Lead A holds the lock, renewed on a connection of its
// own, and sends bob a message; that connection is then cut, so the lease
// expires on the server, and A is never told (its halt is late). Lead B
// (`run --resume` on another host) takes the lock. A's next message to bob
// is refused by the server (B claimed the lead's sending with the lock),
// A stops with fault.ErrOwnerLost, and bob has A's first message and B's, not
// A's second.
func TestALeadThatLostItsOwnerLockSendsNothing(t *testing.T) {
	testkit.SkipShort(t)
	url := natsURL(t)
	const teamName = "leadfence"
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	withBob(t, url, teamName)
	ownerA, renew := cuttableOwner(t, url, teamName)
	a, err := leadTeam(t, url, teamName, srv, lateOwner{ownerA})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := a.messenger.Send(ctx, inbox.LeadName, "bob", "first from A"); err != nil {
		t.Fatalf("A's message while it holds the lock: %v", err)
	}

	(*renew).Close() // A's lease is refreshed no more; A is not told
	var b *Team
	// Tried every 200ms, not at testkit's 10ms: each try opens a team whose
	// connections stay open until the test ends.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if b, err = leadTeam(t, url, teamName, srv, natsOwner(t, url, teamName)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("B could not take the lock A no longer renews: %v", err)
		}
	}
	if err := b.messenger.Send(ctx, inbox.LeadName, "bob", "from B"); err != nil {
		t.Fatalf("B's message: %v", err)
	}

	err = a.messenger.Send(ctx, inbox.LeadName, "bob", "second from A")
	if !errors.Is(err, fault.ErrOwnerLost) {
		t.Errorf("A's message after B took the lock: %v, want it refused with fault.ErrOwnerLost", err)
	}
	if !errors.Is(a.faults.Err(), fault.ErrOwnerLost) {
		t.Errorf("A's fault after its refused message: %v, want fault.ErrOwnerLost", a.faults.Err())
	}
	if err := a.Registry().ChangeStatus(t.Context(), "bob", registry.StatusFailed, nil); !errors.Is(err, fault.ErrOwnerLost) {
		t.Errorf("A's status change of bob after its refused message: %v, want fault.ErrOwnerLost", err)
	}
	msgs, _, err := b.Mailbox().ReadAll(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		if m.From == inbox.LeadName && m.Type == inbox.TypeMessage {
			got = append(got, m.Content)
		}
	}
	if len(got) != 2 || got[0] != "first from A" || got[1] != "from B" {
		t.Errorf("bob's messages from the lead: %q, want A's first and B's", got)
	}
}

// withBob registers bob, idle, in teamName's registry on url.
func withBob(t *testing.T, url, teamName string) {
	t.Helper()
	if err := natsRegistry(t, url, teamName).Change(t.Context(), func(c *registry.Config) error {
		now := time.Now().UTC()
		c.Teammates = append(c.Teammates, registry.Member{Name: "bob", Role: "reviewer", Status: registry.StatusIdle, CreatedAt: now, UpdatedAt: now})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// cuttableOwner is teamName's owner lock on url, renewed on a connection
// of its own that *renew is once acquired: closing it cuts the renewals.
func cuttableOwner(t *testing.T, url, teamName string) (*natsstore.Owner, **nats.Conn) {
	t.Helper()
	renew := new(*nats.Conn)
	o := natsOwner(t, url, teamName).RenewOn(func(context.Context) (*nats.Conn, error) {
		nc, err := nats.Connect(url)
		*renew = nc
		return nc, err
	})
	return o, renew
}

// A lead's process that knows it lost its owner lock writes nothing more:
// neither a message of its lead's, nor the registry, nor the task board,
// nor the lead's session file (what it could still do while its halt goes
// on; another process may now run the team in the same workspace). Its
// lock's renewals are cut; once its lease is lost it halts with
// fault.ErrOwnerLost, and then each write is refused with fault.ErrOwnerLost and none
// reaches the server or the file.
func TestALeadThatLostItsOwnerLockWritesNothing(t *testing.T) {
	testkit.SkipShort(t)
	url := natsURL(t)
	const teamName = "leadgone"
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	withBob(t, url, teamName)
	owner, renew := cuttableOwner(t, url, teamName)
	a, err := leadTeam(t, url, teamName, srv, owner)
	if err != nil {
		t.Fatal(err)
	}
	(*renew).Close()
	select {
	case <-a.Halted():
	case <-time.After(60 * time.Second):
		t.Fatal("the team did not halt 60s after its lease's renewals were cut")
	}
	if !errors.Is(a.faults.Err(), fault.ErrOwnerLost) {
		t.Fatalf("fault: %v, want fault.ErrOwnerLost", a.faults.Err())
	}
	ctx := context.Background()
	if err := a.messenger.Send(ctx, inbox.LeadName, "bob", "after the loss"); !errors.Is(err, fault.ErrOwnerLost) {
		t.Errorf("the lead's message: %v, want fault.ErrOwnerLost", err)
	}
	if err := a.Registry().ChangeStatus(t.Context(), "bob", registry.StatusFailed, nil); !errors.Is(err, fault.ErrOwnerLost) {
		t.Errorf("a status change: %v, want fault.ErrOwnerLost", err)
	}
	if err := a.Registry().Change(t.Context(), func(c *registry.Config) error { c.Sandbox = &registry.SandboxState{State: "off"}; return nil }); !errors.Is(err, fault.ErrOwnerLost) {
		t.Errorf("a registry update: %v, want fault.ErrOwnerLost", err)
	}
	if _, err := a.tasks.CreateTask(ctx, inbox.LeadName, tools.TaskSpec{Subject: "write the parser"}); !errors.Is(err, fault.ErrOwnerLost) {
		t.Errorf("a new task: %v, want fault.ErrOwnerLost", err)
	}
	session := a.ws.SessionPath(inbox.LeadName)
	before, _ := os.ReadFile(session)
	if err := a.lead.Say(t.Context(), "after the loss"); !errors.Is(err, fault.ErrOwnerLost) {
		t.Errorf("an append to the lead's session: %v, want fault.ErrOwnerLost", err)
	}
	if after, _ := os.ReadFile(session); string(after) != string(before) {
		t.Errorf("the lead's session file changed after the loss: %q", after)
	}

	c, err := natsRegistry(t, url, teamName).Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if i := c.Find("bob"); i < 0 || c.Teammates[i].Status != registry.StatusIdle || c.Sandbox != nil {
		t.Errorf("the registry on the server changed: %+v", c)
	}
	msgs, _, err := a.Mailbox().ReadAll(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 0 {
		t.Errorf("bob's inbox: %+v, want nothing", msgs)
	}
	bdoc, err := natsstore.OpenDocWith(ctx, natsConn(t, url), teamName, "board", board.Empty)
	if err != nil {
		t.Fatal(err)
	}
	if tasks, err := board.NewOn(bdoc).List(ctx); err != nil || len(tasks) != 0 {
		t.Errorf("the board on the server: %v, %v, want no task", tasks, err)
	}
}

// The lead's session file is written through a fence (fencedSession),
// which keeps the file open between appends: after a switch to an
// archived conversation (SwitchSession renames the files), the next
// append goes to the current file, not to the one archived by the switch.
func TestTheLeadWritesTheCurrentSessionFileAfterASwitch(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	tm := newTestTeam(t, srv, Options{})
	if err := tm.Lead().Say(t.Context(), "today's question"); err != nil {
		t.Fatal(err)
	}
	const old = "20261120T090000.000"
	testkit.WriteSession(t, tm.ws.SessionPath("lead."+old), time.Now().Add(-time.Hour), testkit.User("the archived question"))
	if err := tm.SwitchSession(t.Context(), old, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := tm.Lead().Say(t.Context(), "after the switch"); err != nil {
		t.Fatal(err)
	}
	current, err := os.ReadFile(tm.ws.SessionPath(inbox.LeadName))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(current); !strings.Contains(got, "the archived question") || !strings.Contains(got, "after the switch") ||
		strings.Contains(got, "today's question") {
		t.Errorf("the current session file after the switch: %q", got)
	}
}
