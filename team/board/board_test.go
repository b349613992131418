package board

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func newTestBoard(t *testing.T) *Board {
	t.Helper()
	return New(filepath.Join(t.TempDir(), "tasks", "board.json"))
}

func mustCreate(t *testing.T, b *Board, by, subject string, blockedBy ...string) Task {
	t.Helper()
	task, err := b.Create(context.Background(), by, NewTask{Subject: subject, BlockedBy: blockedBy})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// wantErr fails unless err wraps target and its text contains says.
func wantErr(t *testing.T, err, target error, says string) {
	t.Helper()
	if !errors.Is(err, target) || !strings.Contains(err.Error(), says) {
		t.Fatalf("err = %v; want %v saying %q", err, target, says)
	}
}

func TestBoardCreateNumbersAndReads(t *testing.T) {
	b := newTestBoard(t)
	if f, err := b.Read(t.Context()); err != nil || len(f.Tasks) != 0 || f.Version != 0 {
		t.Fatalf("a missing board reads as %+v, %v; want empty", f, err)
	}
	t1 := mustCreate(t, b, "lead", "  write the parser  ")
	t2 := mustCreate(t, b, "alice", "test the parser", "t1", " t1 ")
	if t1.ID != "t1" || t2.ID != "t2" || t1.Subject != "write the parser" {
		t.Fatalf("ids %s %s, subject %q", t1.ID, t2.ID, t1.Subject)
	}
	if len(t2.BlockedBy) != 1 || t2.BlockedBy[0] != "t1" || t2.CreatedBy != "alice" || t2.Status != TaskPending {
		t.Fatalf("t2 = %+v", t2)
	}
	f, err := b.Read(t.Context())
	if err != nil || len(f.Tasks) != 2 || f.Version != 2 || f.NextID != 2 {
		t.Fatalf("board %+v, %v", f, err)
	}
}

func TestBoardBlockersAndCompletionUnblocks(t *testing.T) {
	ctx := context.Background()
	b := newTestBoard(t)
	mustCreate(t, b, "lead", "build")
	mustCreate(t, b, "lead", "test", "t1")
	mustCreate(t, b, "lead", "ship", "t1", "t2")

	_, _, err := b.Claim(ctx, "t2", "bob")
	wantErr(t, err, ErrTaskBlocked, "t2 waits for t1")
	if _, _, err := b.Claim(ctx, "t1", "alice"); err != nil {
		t.Fatal(err)
	}
	// Still blocked while t1 is only in progress.
	_, _, err = b.Claim(ctx, "t2", "bob")
	wantErr(t, err, ErrTaskBlocked, "t1")
	// A task cannot be completed before what it waits for either (even by the lead).
	_, _, err = b.Update(ctx, "t2", "lead", TaskCompleted, "")
	wantErr(t, err, ErrTaskBlocked, "t1")

	done, unblocked, err := b.Update(ctx, "t1", "alice", TaskCompleted, "parser in parse.go")
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != TaskCompleted || done.Owner != "alice" || done.Note != "parser in parse.go" {
		t.Fatalf("completed task = %+v", done)
	}
	if len(unblocked) != 1 || unblocked[0].ID != "t2" {
		t.Fatalf("unblocked = %+v, want only t2 (t3 still waits for t2)", unblocked)
	}
	if task, _, err := b.Claim(ctx, "t2", "bob"); err != nil || task.Owner != "bob" || task.Status != TaskInProgress {
		t.Fatalf("claim t2 after t1 completed: %+v %v", task, err)
	}
	_, _, err = b.Claim(ctx, "t3", "carol")
	wantErr(t, err, ErrTaskBlocked, "t3 waits for t2")
}

func TestBoardOnlyOwnerOrLeadCompletesOrReleases(t *testing.T) {
	ctx := context.Background()
	b := newTestBoard(t)
	mustCreate(t, b, "lead", "a")
	mustCreate(t, b, "lead", "b")
	mustCreate(t, b, "lead", "c")

	_, _, err := b.Update(ctx, "t1", "bob", TaskCompleted, "")
	wantErr(t, err, ErrTaskNotAllowed, "claim it first")
	if _, _, err := b.Claim(ctx, "t1", "alice"); err != nil {
		t.Fatal(err)
	}
	_, _, err = b.Update(ctx, "t1", "bob", TaskCompleted, "mine now")
	wantErr(t, err, ErrTaskNotAllowed, "owned by alice")
	_, _, err = b.Update(ctx, "t1", "bob", TaskPending, "")
	wantErr(t, err, ErrTaskNotAllowed, "owned by alice")

	// The lead may complete anyone's task, and an unowned one (it then owns it).
	if task, _, err := b.Update(ctx, "t1", "lead", TaskCompleted, "done by lead"); err != nil || task.Owner != "alice" {
		t.Fatalf("lead completes alice's task: %+v %v", task, err)
	}
	if task, _, err := b.Update(ctx, "t2", "lead", TaskCompleted, ""); err != nil || task.Owner != "lead" {
		t.Fatalf("lead completes an unowned task: %+v %v", task, err)
	}
	// Completed is final.
	_, _, err = b.Update(ctx, "t1", "alice", TaskPending, "")
	wantErr(t, err, ErrTaskNotPending, "already completed")
	_, _, err = b.Claim(ctx, "t1", "bob")
	wantErr(t, err, ErrTaskNotPending, "already completed (by alice)")

	// Release: the owner gives it back; pending, no owner, claimable by another.
	if _, _, err := b.Claim(ctx, "t3", "alice"); err != nil {
		t.Fatal(err)
	}
	task, _, err := b.Update(ctx, "t3", "alice", TaskPending, "stuck on the API")
	if err != nil || task.Status != TaskPending || task.Owner != "" || task.Note != "stuck on the API" {
		t.Fatalf("release: %+v %v", task, err)
	}
	if task, _, err := b.Claim(ctx, "t3", "bob"); err != nil || task.Owner != "bob" {
		t.Fatalf("claim after release: %+v %v", task, err)
	}
	// The lead may release anyone's task.
	if task, _, err := b.Update(ctx, "t3", "lead", TaskPending, ""); err != nil || task.Owner != "" {
		t.Fatalf("lead releases: %+v %v", task, err)
	}
	// Releasing what nobody holds writes nothing.
	before, _ := b.Read(t.Context())
	if _, _, err := b.Update(ctx, "t3", "bob", TaskPending, ""); err != nil {
		t.Fatal(err)
	}
	if after, _ := b.Read(t.Context()); after.Version != before.Version {
		t.Fatalf("a no-op release wrote the board (version %d → %d)", before.Version, after.Version)
	}
}

func TestBoardClaimIsIdempotentAndExclusive(t *testing.T) {
	ctx := context.Background()
	b := newTestBoard(t)
	mustCreate(t, b, "lead", "a")
	if _, already, err := b.Claim(ctx, "t1", "alice"); err != nil || already {
		t.Fatalf("first claim: already=%v %v", already, err)
	}
	v, _ := b.Read(t.Context())
	task, already, err := b.Claim(ctx, "t1", "alice")
	if err != nil || !already || task.Owner != "alice" {
		t.Fatalf("second claim by the owner: %+v already=%v %v", task, already, err)
	}
	if w, _ := b.Read(t.Context()); w.Version != v.Version {
		t.Fatal("an idempotent claim wrote the board")
	}
	// in_progress through Update is a claim, idempotent for the owner too.
	if task, _, err := b.Update(ctx, "t1", "alice", TaskInProgress, ""); err != nil || task.Owner != "alice" {
		t.Fatalf("update in_progress by owner: %+v %v", task, err)
	}
	_, _, err = b.Claim(ctx, "t1", "bob")
	wantErr(t, err, ErrTaskTaken, "owned by alice")
	_, _, err = b.Update(ctx, "t1", "bob", TaskInProgress, "")
	wantErr(t, err, ErrTaskTaken, "owned by alice")
}

func TestBoardRefusesBadInput(t *testing.T) {
	ctx := context.Background()
	b := newTestBoard(t)
	mustCreate(t, b, "lead", "a")
	mustCreate(t, b, "lead", "b", "t1")
	mustCreate(t, b, "lead", "c", "t2")
	before, _ := b.Read(t.Context())

	cases := []struct {
		name   string
		do     func() error
		target error
		says   string
	}{
		{"empty subject", func() error { _, err := b.Create(ctx, "lead", NewTask{Subject: "  "}); return err }, ErrTaskInvalid, "subject is empty"},
		{"long subject", func() error {
			_, err := b.Create(ctx, "lead", NewTask{Subject: strings.Repeat("x", MaxTaskSubject+1)})
			return err
		}, ErrTaskInvalid, "longer than"},
		{"blocked_by unknown", func() error {
			_, err := b.Create(ctx, "lead", NewTask{Subject: "d", BlockedBy: []string{"t9"}})
			return err
		}, ErrTaskNotFound, "t9"},
		{"blocked_by blank", func() error {
			_, err := b.Create(ctx, "lead", NewTask{Subject: "d", BlockedBy: []string{""}})
			return err
		}, ErrTaskInvalid, "empty id"},
		{"bad creator", func() error { _, err := b.Create(ctx, "../x", NewTask{Subject: "d"}); return err }, ErrTaskInvalid, "creator"},
		{"claim unknown", func() error { _, _, err := b.Claim(ctx, "t42", "alice"); return err }, ErrTaskNotFound, `"t42"`},
		{"update unknown", func() error { _, _, err := b.Update(ctx, "nope", "alice", TaskCompleted, ""); return err }, ErrTaskNotFound, `"nope"`},
		{"bad status", func() error { _, _, err := b.Update(ctx, "t1", "lead", "done", ""); return err }, ErrTaskInvalid, `status "done"`},
		{"bad claimer", func() error { _, _, err := b.Claim(ctx, "t1", ""); return err }, ErrTaskInvalid, "empty"},
		{"cycle", func() error { _, err := b.SetBlockers(ctx, "t1", "lead", []string{"t3"}); return err }, ErrTaskInvalid, "t1 → t3 → t2 → t1"},
		{"self", func() error { _, err := b.SetBlockers(ctx, "t1", "lead", []string{"t1"}); return err }, ErrTaskInvalid, "cycle"},
		{"blockers unknown", func() error { _, err := b.SetBlockers(ctx, "t3", "lead", []string{"t7"}); return err }, ErrTaskNotFound, "t7"},
		{"blockers by another", func() error { _, err := b.SetBlockers(ctx, "t3", "bob", []string{"t1"}); return err }, ErrTaskNotAllowed, "created t3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { wantErr(t, c.do(), c.target, c.says) })
	}
	if after, _ := b.Read(t.Context()); after.Version != before.Version || len(after.Tasks) != 3 {
		t.Fatalf("a refused call changed the board: version %d → %d, %d tasks", before.Version, after.Version, len(after.Tasks))
	}

	// Changing blockers without a cycle works, and only on a pending task.
	task, err := b.SetBlockers(ctx, "t3", "lead", []string{"t1"})
	if err != nil || len(task.BlockedBy) != 1 || task.BlockedBy[0] != "t1" {
		t.Fatalf("set blockers: %+v %v", task, err)
	}
	if _, _, err := b.Claim(ctx, "t1", "alice"); err != nil {
		t.Fatal(err)
	}
	_, err = b.SetBlockers(ctx, "t1", "lead", nil)
	wantErr(t, err, ErrTaskNotPending, "in_progress")
}

func TestClaimNextFitsRole(t *testing.T) {
	ctx := context.Background()
	b := newTestBoard(t)
	roles := []string{"programmer", "tester"}
	mk := func(subject, desc, role string, blockedBy ...string) {
		if _, err := b.Create(ctx, "lead", NewTask{Subject: subject, Description: desc, Role: role, BlockedBy: blockedBy}); err != nil {
			t.Fatal(err)
		}
	}
	mk("write docs", "anyone can", "")                           // t1: for anyone
	mk("run the suite", "a Tester's job", "")                    // t2: names tester
	mk("fix the bug", "", "programmer")                          // t3: explicit hint
	mk("review", "the programmer's code, by a tester", "", "t3") // t4: names both, blocked

	next, ok, err := b.NextClaimable(ctx, "bob", "tester", roles)
	if err != nil || !ok || next.ID != "t2" {
		t.Fatalf("next for the tester = %+v %v %v, want t2 (names its role first)", next, ok, err)
	}
	got, ok, err := b.ClaimNext(ctx, "bob", "tester", roles)
	if err != nil || !ok || got.ID != "t2" || got.Owner != "bob" {
		t.Fatalf("claim next for the tester = %+v %v %v", got, ok, err)
	}
	// bob owns a task in progress: nothing more for him.
	if got, ok, _ := b.ClaimNext(ctx, "bob", "tester", roles); ok {
		t.Fatalf("a second task for a busy teammate: %+v", got)
	}
	got, ok, _ = b.ClaimNext(ctx, "alice", "programmer", roles)
	if !ok || got.ID != "t3" {
		t.Fatalf("programmer got %+v, want t3 (its explicit role)", got)
	}
	got, ok, _ = b.ClaimNext(ctx, "carol", "designer", roles)
	if !ok || got.ID != "t1" {
		t.Fatalf("designer got %+v, want t1 (for anyone)", got)
	}
	// t4 is blocked by t3 and nothing else is left.
	if got, ok, _ := b.ClaimNext(ctx, "dave", "tester", roles); ok {
		t.Fatalf("dave got %+v, want nothing (t4 is blocked)", got)
	}
	if _, _, err := b.Update(ctx, "t3", "alice", TaskCompleted, ""); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := b.ClaimNext(ctx, "erin", "designer", roles); ok {
		t.Fatalf("designer got %+v; t4 names other roles", got)
	}
	if got, ok, _ := b.ClaimNext(ctx, "dave", "tester", roles); !ok || got.ID != "t4" {
		t.Fatalf("tester got %+v %v, want t4", got, ok)
	}
}

func TestMentionsWholeWords(t *testing.T) {
	cases := []struct {
		text, word string
		want       bool
	}{
		{"ask the tester", "tester", true},
		{"Tester: run it", "tester", true},
		{"the testers", "tester", false},
		{"retester", "tester", false},
		{"a qa engineer's job", "qa engineer", true},
		{"", "tester", false},
		{"x", "", false},
	}
	for _, c := range cases {
		if got := mentions(c.text, c.word); got != c.want {
			t.Errorf("mentions(%q, %q) = %v, want %v", c.text, c.word, got, c.want)
		}
	}
}
