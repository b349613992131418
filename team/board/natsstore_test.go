package board

import (
	"context"
	"errors"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/store/storetest"
)

// The board on a KV entry keeps the compare-and-set contract, through the
// board's own read-modify-write.
func TestTaskBoardOnJetStreamKeepsTheDocContract(t *testing.T) {
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	storetest.RunDoc(t, storetest.DocOpener[File]{
		Open: func(t *testing.T) storetest.Doc[File] {
			nc, err := nats.Connect(s.ClientURL())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(nc.Close)
			doc, err := natsstore.OpenDocWith(context.Background(), nc, "b1", "board", Empty)
			if err != nil {
				t.Fatal(err)
			}
			return boardDoc{NewOn(doc)}
		},
		Inc:   func(f *File) { f.NextID++ },
		Count: func(f File) int { return f.NextID },
	})
}

// Claims on the KV board are compare-and-set across connections: of many
// agents claiming one task at once, exactly one gets it.
func TestOneClaimWinsOnJetStream(t *testing.T) {
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	open := func() *Board {
		nc, err := nats.Connect(s.ClientURL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		doc, err := natsstore.OpenDocWith(context.Background(), nc, "b2", "board", Empty)
		if err != nil {
			t.Fatal(err)
		}
		return NewOn(doc)
	}
	ctx := context.Background()
	task, err := open().Create(ctx, "lead", NewTask{Subject: "one"})
	if err != nil {
		t.Fatal(err)
	}
	const agents = 8
	won := make(chan string, agents)
	errs := make(chan error, agents)
	for i := range agents {
		b := open()
		go func() {
			name := string(rune('a'+i)) + "gent"
			if _, _, err := b.Claim(ctx, task.ID, name); err != nil {
				errs <- err
				return
			}
			won <- name
		}()
	}
	wins, refusals := 0, 0
	for range agents {
		select {
		case <-won:
			wins++
		case err := <-errs:
			refusals++
			if !errors.Is(err, ErrTaskTaken) {
				t.Errorf("a losing claim said %v, want that the task is taken", err)
			}
		}
	}
	if wins != 1 || refusals != agents-1 {
		t.Fatalf("%d claims won, %d refused; want 1 and %d", wins, refusals, agents-1)
	}
}
