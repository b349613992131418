package loop

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// writeSession writes a session of about size bytes: the task, then tool
// turns with big results, one spawn among the first of them; and one line
// longer than any the loop writes.
func writeSession(t *testing.T, path string, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	must := func(m openai.ChatCompletionMessage) {
		if err := enc.Encode(m); err != nil {
			t.Fatal(err)
		}
	}
	must(openai.ChatCompletionMessage{Role: "user", Content: "the task"})
	big := strings.Repeat("result line\n", 64<<10/12)
	for i, n := 0, 0; n < size; i++ {
		id := "c" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676%26))
		name, args := "read_file", `{"path":"f.txt"}`
		if i == 3 {
			name, args = "spawn_teammate", `{"name":"alice","role":"programmer"}`
		}
		must(openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: id, Type: "function", Function: openai.FunctionCall{Name: name, Arguments: args}}}})
		must(openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: big})
		n += len(big) + 200
		if i == 10 {
			w.WriteString(`{"role":"tool","content":"` + strings.Repeat("z", maxSessionLine+1) + "\"}\n")
		}
	}
	must(openai.ChatCompletionMessage{Role: "user", Content: "<message from=\"bob\" id=\"m-last\">the last word</message>"})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
}

// A session far larger than the restore budget comes back within it: the
// task, a summary that keeps the spawn, and the newest messages.
func TestARestoredSessionStaysWithinItsBudget(t *testing.T) {
	// Small bounds, so that the test is quick under -race; the figure for
	// the real ones is in BENCHMARKS.md.
	budget, line := restoreBudget, maxSessionLine
	restoreBudget, maxSessionLine = 1<<20, 2<<20
	t.Cleanup(func() { restoreBudget, maxSessionLine = budget, line })
	path := filepath.Join(t.TempDir(), "alice.jsonl")
	writeSession(t, path, 12<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	a, err := NewAgent(t.Context(), AgentConfig{Name: "alice", Model: &fakeModel{t: t}, SessionPath: path})
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if held := int64(after.HeapAlloc) - int64(before.HeapAlloc); held > 4<<20 {
		t.Errorf("%d KiB of heap held after restoring a 12 MiB session with a 1 MiB budget", held>>10)
	}
	msgs := a.Messages()
	kept := 0
	for _, m := range msgs {
		kept += len(m.Content)
	}
	if kept > 2*restoreBudget {
		t.Errorf("the restored conversation holds %d MiB, over its budget", kept>>20)
	}
	if msgs[0].Content != "the task" || !strings.HasPrefix(msgs[1].Content, compactedNote) ||
		!strings.Contains(msgs[1].Content, "spawn_teammate") || !strings.Contains(msgs[1].Content, "alice") {
		t.Fatalf("head of the restored conversation: %q / %.300q", msgs[0].Content, msgs[1].Content)
	}
	if last := msgs[len(msgs)-1]; !strings.Contains(last.Content, "the last word") {
		t.Errorf("the newest message is missing: %q", last.Content)
	}
	checkPairing(t, msgs)
	runtime.KeepAlive(a)
}
