package handoff

import (
	"slices"
	"testing"

	"github.com/sashabaranov/go-openai"
)

func TestWorkRecordReadsTheSendersConversation(t *testing.T) {
	tc := func(name, args string) openai.ToolCall {
		return openai.ToolCall{Type: "function", Function: openai.FunctionCall{Name: name, Arguments: args}}
	}
	msgs := []openai.ChatCompletionMessage{
		{Role: "user", Content: "write a.go and b.go"},
		{Role: "assistant", Content: "I start with a.go", ToolCalls: []openai.ToolCall{tc("write_file", `{"path":"a.go","content":"x"}`)}},
		{Role: "tool", Content: "Wrote a.go"},
		{Role: "assistant", ToolCalls: []openai.ToolCall{
			tc("edit_file", `{"path":"b.go","old_text":"a","new_text":"b"}`),
			tc("bash", `{"command":"go test ./...\necho more"}`),
			tc("edit_file", `{"path":"a.go","old_text":"x","new_text":"y"}`),
			tc("read_inbox", `{}`),
			tc("handoff", `{"to":"bob"}`),
			tc("write_file", `not json`),
		}},
	}
	done, decisions, files := workRecord(msgs)
	wantDone := []string{"write_file a.go", "edit_file b.go", "bash: go test ./...", "edit_file a.go", "write_file"}
	if !slices.Equal(done, wantDone) {
		t.Errorf("done %q, want %q", done, wantDone)
	}
	if !slices.Equal(decisions, []string{"I start with a.go"}) {
		t.Errorf("decisions %q", decisions)
	}
	if !slices.Equal(files, []string{"b.go", "a.go"}) { // each once, in the order last touched
		t.Errorf("files %q", files)
	}
}
