package team

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// landedTwice is the registry file whose next Change, once armed, is
// stored and then applied again to what is stored: what a store does with
// a compare-and-set whose first try landed though its answer was lost,
// when it cannot see that try was its own (another write hid it) and
// decides again on the entries it reads back.
type landedTwice struct {
	*statefile.Doc[*registry.Config]
	armed atomic.Bool
	again atomic.Int64 // changes applied a second time
}

func (d *landedTwice) Change(ctx context.Context, fn func(**registry.Config) error) error {
	if err := d.Doc.Change(ctx, fn); err != nil || !d.armed.CompareAndSwap(true, false) {
		return err
	}
	d.again.Add(1)
	return d.Doc.Change(ctx, fn)
}

// A queued spawn whose registry change is applied again after its first
// try was stored finds its own entry (its SpawnID) and succeeds: it failed
// with "a teammate named bob already exists", the spawn answered with an
// error and the teammate never ran (the 300-teammate failover run).
func TestAQueuedSpawnWhoseRegistryChangeLandedTwiceSucceeds(t *testing.T) {
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "done"} })
	defer srv.Close()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	doc := &landedTwice{Doc: statefile.NewDoc(ws.RegistryPath(), "registry", registry.EmptyConfig(""))}
	q := &memQueue{jobs: make(chan *memJob, 1), done: map[string]string{}}
	tm := newTestTeam(t, srv, Options{Workspace: ws, Queue: q, MaxQueue: 10, Registry: registry.NewRegistryOn(doc, "")})
	doc.armed.Store(true)
	if err := tm.roster.spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "bob", Role: "dev", Prompt: "hi"}); err != nil {
		t.Fatalf("a spawn whose registry change landed before it was applied again: %v", err)
	}
	if doc.again.Load() != 1 {
		t.Fatal("the spawn's registry change was not applied again: the test proves nothing")
	}
	c, err := tm.reg.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range c.Teammates {
		if m.Name == "bob" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the registry holds bob %d times, want once", n)
	}
}
