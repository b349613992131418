package openaiwire

import (
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

func sys(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "system", Content: s}
}
func user(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "user", Content: s}
}
func text(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "assistant", Content: s}
}
func toolRes(id, s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "tool", ToolCallID: id, Content: s}
}
func calls(ids ...string) openai.ChatCompletionMessage {
	m := openai.ChatCompletionMessage{Role: "assistant"}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: "bash", Arguments: `{"command":"ls"}`}})
	}
	return m
}

func TestValidateMessages(t *testing.T) {
	badType := calls("c1")
	badType.ToolCalls[0].Type = ""
	noName := calls("c1")
	noName.ToolCalls[0].Function.Name = ""
	tests := []struct {
		name string
		msgs []openai.ChatCompletionMessage
		want string // "" = valid; otherwise a fragment of the error
	}{
		{"plain chat", []openai.ChatCompletionMessage{sys("s"), user("hi"), text("hello"), user("again")}, ""},
		{"one call answered", []openai.ChatCompletionMessage{sys("s"), user("hi"), calls("c1"), toolRes("c1", "ok"), text("done")}, ""},
		{"parallel calls answered in any order", []openai.ChatCompletionMessage{user("hi"), calls("c1", "c2"), toolRes("c2", "b"), toolRes("c1", "a")}, ""},
		{"two rounds", []openai.ChatCompletionMessage{user("hi"), calls("c1"), toolRes("c1", "a"), calls("c2"), toolRes("c2", "b"), user("inbox"), text("ok")}, ""},
		{"ends with assistant text", []openai.ChatCompletionMessage{user("hi"), text("prefill")}, ""},
		{"multi-part user content", []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{{Type: "text", Text: "hi"}}}}, ""},

		{"empty", nil, "too short"},
		{"unknown role", []openai.ChatCompletionMessage{{Role: "robot", Content: "x"}}, "invalid role"},
		{"developer role refused", []openai.ChatCompletionMessage{{Role: "developer", Content: "x"}}, "invalid role"},
		{"tool without tool_calls", []openai.ChatCompletionMessage{user("hi"), toolRes("c1", "x")}, "preceding message with 'tool_calls'"},
		{"tool after assistant text", []openai.ChatCompletionMessage{user("hi"), text("t"), toolRes("c1", "x")}, "preceding message with 'tool_calls'"},
		{"tool answering unknown id", []openai.ChatCompletionMessage{user("hi"), calls("c1"), toolRes("c9", "x")}, "does not answer"},
		{"tool answering an older call", []openai.ChatCompletionMessage{user("hi"), calls("c1"), toolRes("c1", "a"), calls("c2"), toolRes("c1", "again")}, "does not answer"},
		{"duplicate answer", []openai.ChatCompletionMessage{user("hi"), calls("c1", "c2"), toolRes("c1", "a"), toolRes("c1", "b"), toolRes("c2", "c")}, "duplicate answer"},
		{"unanswered then user", []openai.ChatCompletionMessage{user("hi"), calls("c1", "c2"), toolRes("c1", "a"), user("next")}, "c2"},
		{"unanswered then assistant", []openai.ChatCompletionMessage{user("hi"), calls("c1"), text("oops")}, "must be followed by tool messages"},
		{"final tool_calls unanswered", []openai.ChatCompletionMessage{user("hi"), calls("c1")}, "no tool messages responding"},
		{"final tool_calls half answered", []openai.ChatCompletionMessage{user("hi"), calls("c1", "c2"), toolRes("c2", "b")}, "c1"},
		{"duplicate call ids", []openai.ChatCompletionMessage{user("hi"), calls("c1", "c1"), toolRes("c1", "a")}, "duplicate tool call id"},
		{"call without id", []openai.ChatCompletionMessage{user("hi"), calls(""), toolRes("", "a")}, "'id'"},
		{"call without type", []openai.ChatCompletionMessage{user("hi"), badType, toolRes("c1", "a")}, "invalid type"},
		{"call without name", []openai.ChatCompletionMessage{user("hi"), noName, toolRes("c1", "a")}, "function.name"},
		{"empty user content", []openai.ChatCompletionMessage{user("")}, "'content'"},
		{"empty tool content", []openai.ChatCompletionMessage{user("hi"), calls("c1"), toolRes("c1", "")}, "'content'"},
		{"empty assistant", []openai.ChatCompletionMessage{user("hi"), text(""), user("x")}, "needs 'content' or 'tool_calls'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateMessages(tt.msgs)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want error containing %q, got %v", tt.want, err)
			}
		})
	}
}

func fn(name string) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name}}
}

func TestValidateRequestTools(t *testing.T) {
	conv := []openai.ChatCompletionMessage{user("hi"), calls("c1"), toolRes("c1", "a")}
	tests := []struct {
		name  string
		tools []openai.Tool
		want  string
	}{
		{"no tools declared is not checked", nil, ""},
		{"declared", []openai.Tool{fn("read_file"), fn("bash")}, ""},
		{"undeclared call in history is accepted", []openai.Tool{fn("read_file")}, ""},
		{"duplicate tool", []openai.Tool{fn("bash"), fn("bash")}, "duplicate tool name"},
		{"bad tool name", []openai.Tool{fn("bash"), fn("has space")}, "does not match"},
		{"tool without function", []openai.Tool{{Type: openai.ToolTypeFunction}}, "'function'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateRequest(openai.ChatCompletionRequest{Messages: conv, Tools: tt.tools})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("want error containing %q, got %v", tt.want, err)
			}
		})
	}
}
