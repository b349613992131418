package llm

import (
	"encoding/json"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Qwen and Hermes models write tool calls into their text when the server
// runs no tool parser (vLLM without --tool-call-parser, some Ollama
// templates): <tool_call>{"name": …, "arguments": …}</tool_call>.

const (
	toolCallOpen  = "<tool_call>"
	toolCallClose = "</tool_call>"
)

// textToolCalls turns such blocks into tool calls when every block names a
// declared tool (any tool when none is declared) and parses; the text
// outside them stays the content. Anything else leaves resp as it is.
func textToolCalls(resp *Response, declared []openai.Tool) {
	content := resp.Message.Content
	if !strings.Contains(content, toolCallOpen) {
		return
	}
	known := map[string]bool{}
	for _, t := range declared {
		if t.Function != nil {
			known[t.Function.Name] = true
		}
	}
	var calls []openai.ToolCall
	var text strings.Builder
	rest := content
	for {
		before, after, found := strings.Cut(rest, toolCallOpen)
		text.WriteString(before)
		if !found {
			break
		}
		block, tail, closed := strings.Cut(after, toolCallClose)
		if !closed {
			tail = "" // a last block the server cut at its stop token
		}
		tc, ok := parseTextCall(block, known)
		if !ok {
			return
		}
		calls = append(calls, tc)
		rest = tail
	}
	resp.Message.Content = strings.TrimSpace(text.String())
	resp.Message.ToolCalls = calls
	resp.FinishReason = string(openai.FinishReasonToolCalls)
}

func parseTextCall(block string, known map[string]bool) (openai.ToolCall, bool) {
	var c struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(block)), &c); err != nil || c.Name == "" {
		return openai.ToolCall{}, false
	}
	if len(known) > 0 && !known[c.Name] {
		return openai.ToolCall{}, false
	}
	var args wireArgs
	if err := args.UnmarshalJSON(c.Arguments); err != nil {
		return openai.ToolCall{}, false
	}
	return openai.ToolCall{Type: openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: c.Name, Arguments: string(args)}}, true
}
