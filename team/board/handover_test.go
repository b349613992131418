package board

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestHandOverIsCompareAndSet: of 8 concurrent handovers of one task from
// its owner, exactly one succeeds; a task its owner no longer holds is not
// handed over at all.
func TestHandOverIsCompareAndSet(t *testing.T) {
	b := New(t.TempDir() + "/board.json")
	ctx := context.Background()
	task, err := b.Create(ctx, "lead", NewTask{Subject: "s"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Claim(ctx, task.ID, "alice"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wins := make(chan string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			to := fmt.Sprintf("bob%d", i)
			_, err := b.HandOver(ctx, task.ID, "alice", to)
			switch {
			case err == nil:
				wins <- to
			case !errors.Is(err, ErrTaskTaken):
				t.Errorf("handover to %s: %v", to, err)
			}
		}()
	}
	wg.Wait()
	close(wins)
	var got []string
	for w := range wins {
		got = append(got, w)
	}
	f, _ := b.Read(t.Context())
	if len(got) != 1 || f.Tasks[0].Owner != got[0] || f.Tasks[0].Status != TaskInProgress {
		t.Fatalf("winners %v, board %+v", got, f.Tasks[0])
	}
	if _, _, err := b.Update(ctx, task.ID, got[0], TaskPending, "released"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.HandOver(ctx, task.ID, got[0], "carol"); !errors.Is(err, ErrTaskTaken) {
		t.Fatalf("handover of a released task: %v", err)
	}
}
