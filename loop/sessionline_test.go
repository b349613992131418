package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func TestSessionLineShape(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.jsonl")
	s := &session{path: path}
	err := s.append(t.Context(),
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function",
			Function: openai.FunctionCall{Name: "bash", Arguments: `{"command":"ls"}`}}}},
		toolMessage("c1", ""),
	)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := `{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}` + "\n" +
		`{"role":"tool","content":"(no output)","tool_call_id":"c1"}` + "\n"
	if string(data) != want {
		t.Errorf("session lines:\n%s\nwant:\n%s", data, want)
	}
	if strings.Count(string(data), "\n") != 2 {
		t.Error("not one line per message")
	}
}
