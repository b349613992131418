package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
)

// Every write shows as a diff in `run --json`: the tool_call events of
// write_file and edit_file carry the unified diff the write made, cut at
// 32 KiB with a line that says how much was left out.
func TestRunJSONToolCallsCarryTheWritesDiff(t *testing.T) {
	var big strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&big, "line %d\n", i)
	}
	bigArgs, _ := json.Marshal(map[string]string{"path": "big.txt", "content": big.String()})
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"docs/notes.md","content":"one\ntwo\n"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("edit_file", `{"path":"docs/notes.md","old_text":"two","new_text":"TWO"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"docs/notes.md","content":"one\nTWO\n"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", string(bigArgs))}},
		fakellm.Reply{Content: "wrote them"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--json", "write the notes")
	mustSucceed(t, r, "run")
	noViolations(t, srv)

	var writes []event.ToolCall
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var e event.Event
		if json.Unmarshal([]byte(line), &e) != nil {
			continue // run's closing line
		}
		if c, ok := e.Payload.(event.ToolCall); ok && (c.Tool == "write_file" || c.Tool == "edit_file") {
			writes = append(writes, c)
		}
	}
	if len(writes) != 4 {
		t.Fatalf("run --json has %d write tool calls, want 4:\n%s", len(writes), r.stdout)
	}
	for i, want := range [][]string{
		{"--- /dev/null\n", "+++ b/docs/notes.md\n", "+one\n", "+two\n"},
		{"--- a/docs/notes.md\n", "+++ b/docs/notes.md\n", "-two\n", "+TWO\n"},
		{"(docs/notes.md: no change)"},
		{"--- /dev/null\n", "+line 0\n", "+line 100\n", "[diff cut: "},
	} {
		for _, w := range want {
			if !strings.Contains(writes[i].Diff, w) {
				t.Errorf("write %d (%s): its diff lacks %q:\n%.400s", i, writes[i].Tool, w, writes[i].Diff)
			}
		}
	}
	big4 := writes[3].Diff
	if len(big4) > 33<<10 || strings.Contains(big4, "+line 4999\n") {
		t.Errorf("the big write's diff is not cut: %d bytes", len(big4))
	}
	if !strings.HasSuffix(big4, " bytes) not shown]\n") {
		t.Errorf("the cut diff does not say how much was cut: …%s", big4[max(0, len(big4)-200):])
	}
	// The model reads only the result, never the diff.
	for _, res := range toolResults(t, ws, "lead") {
		if strings.Contains(res, "+++ b/") {
			t.Errorf("a tool result sent to the model carries the diff: %q", res)
		}
	}
	if got, err := os.ReadFile(filepath.Join(ws, "docs", "notes.md")); err != nil || string(got) != "one\nTWO\n" {
		t.Errorf("docs/notes.md = %q, %v", got, err)
	}
}
