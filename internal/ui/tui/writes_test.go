package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/worktree"
)

// allowedWrite and wrote are the two events of a write that went well:
// the permission that let it run, with its diff, then its tool call.
func allowedWrite(agent, tool, path, diff string) event.Event {
	return event.Event{Agent: agent, Payload: event.Permission{Tool: tool, Subject: path, Decision: "allowed", By: "mode", Diff: diff}}
}

func wrote(agent, tool, args string) event.Event {
	return event.Event{Agent: agent, Payload: event.ToolCall{Tool: tool, Args: args, Result: "ok: " + tool}}
}

const (
	notesDiff = "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,3 @@\n line one\n-line two\n+LINE TWO\n+line three\n"
	freshDiff = "--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+fresh line\n"
)

// Every write, the lead's and each teammate's, is one line in the lead's
// conversation, folded; ctrl+g or /diffs shows the diffs whole.
func TestEveryWriteShowsAsAFoldedDiff(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: true})
	hs.send(events(
		allowedWrite("lead", "write_file", "a.txt", freshDiff),
		wrote("lead", "write_file", `{"path":"a.txt","content":"fresh line\n"}`),
		allowedWrite("alice", "edit_file", "notes.txt", notesDiff),
		wrote("alice", "edit_file", `{"path":"./notes.txt","old_text":"line two","new_text":"LINE TWO\nline three"}`),
	))
	hs.mustSee("✎ wrote a.txt (+1 −0) · ctrl+g shows it", "✎ alice edited notes.txt (+2 −1) · ctrl+g shows it")
	hs.mustNotSee("+fresh line", "+LINE TWO", "-line two")

	hs.send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	hs.mustSee("✎ wrote a.txt (+1 −0)", "+fresh line", "✎ alice edited notes.txt (+2 −1)", "-line two", "+LINE TWO", "+line three", "@@ -1,2 +1,3 @@")
	hs.mustNotSee("ctrl+g shows it")

	hs.enter("/diffs")
	hs.mustNotSee("+fresh line")
	hs.enter("/diffs on")
	hs.mustSee("+fresh line", "+LINE TWO")
	hs.enter("/diffs on")
	hs.mustSee("+fresh line") // on stays on
	hs.enter("/diffs off")
	hs.mustNotSee("+fresh line")
	hs.enter("/diffs sideways")
	hs.mustSee("/diffs takes on or off")

	// ctrl+o, which expands every tool call's result, shows a write's too.
	hs.send(tea.KeyPressMsg{Code: 'o', Mod: tea.ModCtrl})
	hs.mustSee("ok: write_file", "+fresh line")
}

// The team panel sums each teammate's writes when it works in the
// workspace itself; a worktree teammate shows its branch's change instead.
func TestTeamPanelSumsATeammatesWrites(t *testing.T) {
	hs := newHarness(t, 160, 30, Options{HasModel: true})
	hs.send(withBranch(members("alice:idle", "bob:idle"), "bob", "1 file changed, 1 insertion(+)"))
	hs.send(events(
		allowedWrite("alice", "edit_file", "notes.txt", notesDiff),
		wrote("alice", "edit_file", `{"path":"notes.txt","old_text":"line two","new_text":"LINE TWO\nline three"}`),
		allowedWrite("alice", "write_file", "a.txt", freshDiff),
		wrote("alice", "write_file", `{"path":"a.txt","content":"fresh line\n"}`),
		allowedWrite("alice", "write_file", "a.txt", freshDiff),
		wrote("alice", "write_file", `{"path":"a.txt","content":"fresh line\n"}`),
		allowedWrite("bob", "write_file", "b.txt", freshDiff),
		wrote("bob", "write_file", `{"path":"b.txt","content":"fresh line\n"}`),
	))
	hs.mustSee("alice tester idle · wrote +4 -1 (2 files)", "bob tester idle · branch +1 -0 (1 file)")
	hs.mustNotSee("bob tester idle · wrote")
}

// Two writes of one turn may end in either order: each shows its own diff.
func TestWritesOfOneTurnKeepTheirOwnDiffs(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: true})
	hs.send(events(
		allowedWrite("bob", "write_file", "one.txt", "--- /dev/null\n+++ b/one.txt\n@@ -0,0 +1 @@\n+first file\n"),
		allowedWrite("bob", "write_file", "dir/two.txt", "--- /dev/null\n+++ b/dir/two.txt\n@@ -0,0 +1,2 @@\n+second\n+file\n"),
		wrote("bob", "write_file", `{"path":"dir/two.txt","content":"second\nfile\n"}`),
		wrote("bob", "write_file", `{"path":"one.txt","content":"first file\n"}`),
	))
	hs.send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	v := hs.view()
	two, one := strings.Index(v, "bob wrote dir/two.txt (+2 −0)"), strings.Index(v, "bob wrote one.txt (+1 −0)")
	if two < 0 || one < 0 || two > one {
		t.Fatalf("the two writes are not shown in the order they ended:\n%s", v)
	}
	if d := v[two:one]; !strings.Contains(d, "+second") || strings.Contains(d, "+first file") {
		t.Fatalf("dir/two.txt shows another write's diff:\n%s", d)
	}
	if !strings.Contains(v[one:], "+first file") {
		t.Fatalf("one.txt lacks its diff:\n%s", v)
	}
}

func TestSamePath(t *testing.T) {
	for _, c := range []struct {
		arg, subject string
		want         bool
	}{
		{"notes.txt", "notes.txt", true},
		{"./docs/../notes.txt", "notes.txt", true},
		{"/home/me/project/notes.txt", "notes.txt", true},
		{"docs/notes.txt", "notes.txt", false},
		{"notes.txt", "docs/notes.txt", false},
		{"/home/me/project/mynotes.txt", "notes.txt", false},
		{"", "notes.txt", false},
	} {
		if got := samePath(c.arg, c.subject); got != c.want {
			t.Errorf("samePath(%q, %q) = %v, want %v", c.arg, c.subject, got, c.want)
		}
	}
}

// A write the tool refused stays a failed tool call; a teammate's other
// tool calls stay in its own conversation.
func TestAFailedWriteIsNotShownAsWritten(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	hs.send(events(
		allowedWrite("lead", "write_file", "full.txt", freshDiff),
		event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "write_file", Args: `{"path":"full.txt","content":"x"}`, Result: "error: no space left on device", IsError: true}},
		allowedWrite("carol", "write_file", "c.txt", freshDiff),
		event.Event{Agent: "carol", Payload: event.ToolCall{Tool: "write_file", Args: `{"path":"c.txt","content":"x"}`, Result: "error: disk full", IsError: true}},
		event.Event{Agent: "carol", Payload: event.ToolCall{Tool: "bash", Args: `{"command":"ls"}`, Result: "a.txt"}},
	))
	hs.mustSee("⚙ write_file full.txt  ✗")
	hs.mustNotSee("wrote", "carol")
}

// A diff is a file's content, which a model chose: its control characters
// must not reach the terminal.
func TestAWritesDiffCannotDriveTheTerminal(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	evil := "--- /dev/null\n+++ b/x.txt\n@@ -0,0 +1 @@\n+\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07gotcha\n"
	hs.send(events(allowedWrite("alice", "write_file", "x\x1b[31m.txt", evil), wrote("alice", "write_file", `{"path":"x\u001b[31m.txt","content":"x"}`)))
	hs.send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	v := hs.view()
	if strings.ContainsRune(v, 0x1b) || strings.ContainsRune(v, 0x07) {
		t.Fatalf("control characters of the diff reached the screen:\n%q", v)
	}
	hs.mustSee("alice wrote x?[31m.txt (+1 −0)", "gotcha")
}

// A long diff is cut in the conversation, saying how much more there is.
func TestALongWriteDiffIsBounded(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	var b strings.Builder
	b.WriteString("--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,500 @@\n")
	for i := range 500 {
		fmt.Fprintf(&b, "+line %d\n", i)
	}
	hs.send(events(allowedWrite("lead", "write_file", "big.txt", b.String()), wrote("lead", "write_file", `{"path":"big.txt","content":"…"}`)))
	hs.mustSee("✎ wrote big.txt (+500 −0)")
	hs.send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	hs.mustSee(fmt.Sprintf("… %d more lines", 503-maxWriteDiffLines))
	hs.mustNotSee("+line 499")

	// One long line (a minified file) is cut too, not wrapped into thousands of rows.
	long := strings.Repeat("é", 50_000)
	hs.send(events(allowedWrite("lead", "write_file", "min.js", "--- /dev/null\n+++ b/min.js\n@@ -0,0 +1 @@\n+"+long+"\n"), wrote("lead", "write_file", `{"path":"min.js","content":"…"}`)))
	e := hs.m.lead.last()
	if e.kind != entryWrite {
		t.Fatalf("the write of min.js is not a write entry: %+v", e)
	}
	if n := len(hs.m.r.lines(e, 100)); n > 30 {
		t.Fatalf("the write of one long line takes %d rows", n)
	}
	hs.mustSee("✎ wrote min.js (+1 −0)", "more bytes)")
}

// The focused teammate's conversation, read from its session, shows its
// writes that this screen saw as diffs too, whichever came first: the
// event or the read.
func TestFocusedTeammatesWritesShowTheirDiffs(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: true})
	hs.send(members("alice:idle"))
	args := `{"path":"notes.txt","old_text":"line two","new_text":"LINE TWO\nline three"}`
	hs.eng.convs["alice"] = []openai.ChatCompletionMessage{
		{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Function: openai.FunctionCall{Name: "edit_file", Arguments: args}}}},
		{Role: "tool", ToolCallID: "c1", Content: "ok: edit_file"},
	}
	hs.send(events(allowedWrite("alice", "edit_file", "notes.txt", notesDiff), wrote("alice", "edit_file", args)))
	hs.key(tea.KeyTab)
	hs.flush()
	hs.mustSee("alice · read-only", "✎ edited notes.txt (+2 −1)")
	hs.send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	hs.mustSee("+LINE TWO", "-line two")

	// Read first, event after: the entry becomes the write it is.
	args2 := `{"path":"b.txt","content":"fresh line\n"}`
	hs.eng.convs["alice"] = append(hs.eng.convs["alice"],
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c2", Function: openai.FunctionCall{Name: "write_file", Arguments: args2}}}},
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: "c2", Content: "ok: write_file"})
	hs.send(events(event.Event{Agent: "alice", Payload: event.Reply{}}))
	hs.flush()
	hs.mustSee("⚙ write_file b.txt  ✓")
	hs.send(events(allowedWrite("alice", "write_file", "b.txt", freshDiff), wrote("alice", "write_file", args2)))
	hs.flush()
	hs.mustSee("✎ wrote b.txt (+1 −0)", "+fresh line")
}

// withBranch is a snapshot in which name works on its own branch.
func withBranch(snap poll.Snapshot, name, stat string) poll.Snapshot {
	for i := range snap.Config.Teammates {
		if snap.Config.Teammates[i].Name == name {
			snap.Config.Teammates[i].Branch, snap.Config.Teammates[i].Isolation = "agentteam/"+name, worktree.IsolationWorktree
			snap.Config.Teammates[i].Diffstat = stat
		}
	}
	return snap
}

// Focusing a worktree teammate shows its branch's diff first, read by a
// command (not in Update), and read again when the teammate reports.
func TestFocusShowsTheTeammatesBranchDiff(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: true})
	hs.send(withBranch(members("alice:idle", "bob:idle"), "alice", "1 file changed, 1 insertion(+), 1 deletion(-)"))
	hs.eng.diffText = " notes.txt | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)\n\ndiff --git a/notes.txt b/notes.txt\n--- a/notes.txt\n+++ b/notes.txt\n@@ -1,2 +1,2 @@\n line one\n-line two\n+alice was here\n"
	hs.eng.convs["alice"] = []openai.ChatCompletionMessage{{Role: "assistant", Content: "Done with notes."}}

	cmd := hs.key(tea.KeyTab)
	if len(hs.eng.diffs) != 0 {
		t.Fatal("the diff was read in Update")
	}
	hs.mustSee("branch agentteam/alice against the lead's branch", "reading the diff…")
	hs.run(cmd)
	hs.flush()
	hs.mustSee("branch agentteam/alice against the lead's branch", "notes.txt | 2 +-", "-line two", "+alice was here", "Done with notes.")
	if len(hs.eng.diffs) != 1 || hs.eng.diffs[0] != "alice" {
		t.Fatalf("diffs read: %v", hs.eng.diffs)
	}

	// alice reports: her work is committed, the diff is read again.
	hs.eng.diffText = strings.Replace(hs.eng.diffText, "+alice was here", "+alice was here twice", 1)
	cmd = hs.send(events(event.Event{Agent: "alice", Payload: event.MessageDelivered{From: "alice", To: "lead", Type: inbox.TypeResult, Content: "done"}}))
	hs.run(cmd)
	hs.flush()
	hs.mustSee("+alice was here twice")
	if len(hs.eng.diffs) != 2 {
		t.Fatalf("the report did not read the diff again: %v", hs.eng.diffs)
	}

	// /clear empties the pane; the next report brings the diff back, first.
	hs.enter("/clear")
	hs.mustNotSee("branch agentteam/alice")
	hs.run(hs.send(events(event.Event{Agent: "alice", Payload: event.WorktreeChanged{Action: event.WorktreeCommitted, Branch: "agentteam/alice"}})))
	hs.mustSee("branch agentteam/alice against the lead's branch", "+alice was here twice")

	// bob works in the workspace itself: no branch, no read.
	hs.run(hs.key(tea.KeyTab))
	hs.flush()
	hs.mustSee("bob · read-only")
	hs.mustNotSee("branch agentteam")
	if len(hs.eng.diffs) != 3 {
		t.Fatalf("a teammate without a branch had its diff read: %v", hs.eng.diffs)
	}
}

// A branch learned after the focus (the registry's snapshot comes later),
// a new diffstat, and a read that fails.
func TestFocusBranchDiffFollowsTheRegistry(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: true})
	hs.send(members("alice:working"))
	hs.run(hs.key(tea.KeyTab))
	hs.flush()
	if len(hs.eng.diffs) != 0 {
		t.Fatalf("diff read before alice had a branch: %v", hs.eng.diffs)
	}
	hs.run(hs.send(withBranch(members("alice:idle"), "alice", "")))
	hs.mustSee("+TWO by alice")
	hs.run(hs.send(withBranch(members("alice:idle"), "alice", "")))
	if len(hs.eng.diffs) != 1 {
		t.Fatalf("the same snapshot read the diff again: %v", hs.eng.diffs)
	}
	hs.eng.err = fmt.Errorf("the branch agentteam/alice no longer exists (merged and removed)")
	hs.run(hs.send(withBranch(members("alice:idle"), "alice", "1 file changed, 1 insertion(+)")))
	hs.mustSee("! the branch agentteam/alice no longer exists")
}

// A long branch diff scrolls with the pane: focus starts at the diff,
// pgdn goes on, end follows the conversation.
func TestALongBranchDiffScrolls(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	hs.send(withBranch(members("alice:idle"), "alice", "1 file changed, 80 insertions(+)"))
	var b strings.Builder
	b.WriteString("diff --git a/big.txt b/big.txt\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,80 @@\n")
	for i := range 80 {
		fmt.Fprintf(&b, "+row %02d\n", i)
	}
	hs.eng.diffText = b.String()
	hs.eng.convs["alice"] = []openai.ChatCompletionMessage{{Role: "assistant", Content: "The last word of alice."}}
	hs.run(hs.key(tea.KeyTab))
	hs.flush()
	hs.mustSee("branch agentteam/alice", "+row 00", "more below")
	hs.mustNotSee("+row 79", "The last word of alice.")
	for range 3 {
		hs.key(tea.KeyPgDown)
	}
	hs.mustSee("+row 79")
	hs.key(tea.KeyEnd)
	hs.mustSee("The last word of alice.")
}

// A write that no permission event announced (a yolo run, a rule that
// allows it without a word) still shows the diff its tool call carries; and
// where both are there, the tool call's, what the write made, wins.
func TestAWriteShowsTheDiffItsToolCallCarries(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: true})
	made := wrote("alice", "write_file", `{"path":"./a.txt","content":"fresh line\n"}`)
	tc := made.Payload.(event.ToolCall)
	tc.Diff = freshDiff
	made.Payload = tc
	edited := wrote("bob", "edit_file", `{"path":"notes.txt","old_text":"line two","new_text":"LINE TWO\nline three"}`)
	ec := edited.Payload.(event.ToolCall)
	ec.Diff = notesDiff
	edited.Payload = ec
	hs.send(events(
		made,
		allowedWrite("bob", "edit_file", "notes.txt", "--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-stale\n+guess\n"),
		edited,
	))
	hs.mustSee("✎ alice wrote a.txt (+1 −0)", "✎ bob edited notes.txt (+2 −1)")
	hs.send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	hs.mustSee("+fresh line", "+LINE TWO", "-line two")
	hs.mustNotSee("+guess")
}

// A command that changed files the person's tools run later (.envrc) shows
// as a write line with its diff.
func TestACommandsChangeOfAPersonRunFileShows(t *testing.T) {
	hs := newHarness(t, 120, 40, Options{HasModel: true})
	ran := event.Event{Agent: "alice", Payload: event.ToolCall{Tool: "bash", Args: `{"command":"echo x > .envrc"}`,
		Result: "exit code: 0\n(this command changed .envrc: …)", Diff: "--- /dev/null\n+++ b/.envrc\n@@ -0,0 +1 @@\n+export PATH=/tmp/evil\n"}}
	hs.send(events(ran))
	hs.mustSee("✎ alice ran a command that changed .envrc (+1 −0)")
	hs.send(tea.KeyPressMsg{Code: 'g', Mod: tea.ModCtrl})
	hs.mustSee("+export PATH=/tmp/evil")
}
