package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// TestPermissionAWorktreeTeammateIsJudgedInItsWorktree: a teammate that
// works in its own worktree has each write judged where its tools make it.
// A relative path is its worktree's file: auto-edit lets it run and the
// diff is against that file, not the lead's copy (the gate read the lead's,
// so the write asked as if outside its root). An absolute path into its
// worktree does not slip past a deny rule (the gate took it for
// agentteam's state, left it to the tool, and the tool wrote it).
func TestPermissionAWorktreeTeammateIsJudgedInItsWorktree(t *testing.T) {
	ws := gitRepo(t)
	wt := filepath.Join(ws, ".agentteam", "worktrees", "alice")
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"sign line two","isolation":"worktree"}`)}},
			{Content: "alice is on it"},
		},
		"alice": {
			{ToolCalls: []fakellm.ToolCall{call("edit_file", `{"path":"notes.txt","old_text":"two","new_text":"two, signed"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("edit_file", `{"path":"notes.txt","old_text":"two, signed","new_text":"two, signed twice"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("write_file", fmt.Sprintf(`{"path":%q,"content":"leaked\n"}`, filepath.Join(wt, "secret.txt")))}},
			{Content: "line two is signed"},
		},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": noted"} }), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--permission-mode", "auto-edit", "--deny", "write_file(secret.txt)", "go")
	mustSucceed(t, r, "run")
	noViolations(t, srv)

	res := toolResults(t, ws, "alice")
	if len(res) != 3 {
		t.Fatalf("alice's tool results: %q", res)
	}
	for _, r := range res[:2] {
		if strings.Contains(r, "permission denied") {
			t.Errorf("a write in alice's own worktree was not allowed by auto-edit: %q", r)
		}
	}
	if !strings.Contains(res[2], "permission denied") || !strings.Contains(res[2], "write_file(secret.txt)") {
		t.Errorf("the write by absolute path was not refused by the deny rule: %q", res[2])
	}
	if _, err := os.Stat(filepath.Join(wt, "secret.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("secret.txt was written in alice's worktree despite the deny rule (%v)", err)
	}
	if got, err := os.ReadFile(filepath.Join(wt, "notes.txt")); err != nil || string(got) != "one\ntwo, signed twice\nthree\n" {
		t.Errorf("alice's notes.txt = %q, %v", got, err)
	}
	// The second edit's diff is against alice's file, which the first changed.
	found := false
	for _, p := range permissionEvents(t, ws) {
		if p.Tool == "edit_file" && strings.Contains(p.Diff, "+two, signed twice") {
			found = true
			if !strings.Contains(p.Diff, "-two, signed\n") {
				t.Errorf("the second edit's diff is not against alice's file:\n%s", p.Diff)
			}
		}
	}
	if !found {
		t.Error("no permission event carries the second edit's diff")
	}
}
