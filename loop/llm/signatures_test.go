package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// sentSignatures reads, from a request body, the thought signature of each
// assistant message's tool calls.
func sentSignatures(t *testing.T, body []byte) [][]string {
	t.Helper()
	var req struct {
		Messages []struct {
			ToolCalls []struct {
				ExtraContent *extraContent `json:"extra_content"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, m := range req.Messages {
		if len(m.ToolCalls) == 0 {
			continue
		}
		var sigs []string
		for _, tc := range m.ToolCalls {
			sigs = append(sigs, tc.ExtraContent.signature())
		}
		out = append(out, sigs)
	}
	return out
}

// TestThoughtSignaturesGoBack: Gemini's signature on a turn's first call is
// kept by call id and sent back with that call; a conversation whose
// signatures were never seen gets the sentinel after Gemini's refusal.
func TestThoughtSignaturesGoBack(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprint("stream ", stream), func(t *testing.T) {
			var mu sync.Mutex
			var bodies [][]byte
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				mu.Lock()
				bodies = append(bodies, b)
				mu.Unlock()
				if !stream {
					status(200, nil, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[`+
						`{"id":"g1","type":"function","function":{"name":"bash","arguments":"{}"},"extra_content":{"google":{"thought_signature":"SIG1"}}},`+
						`{"id":"g2","type":"function","function":{"name":"bash","arguments":"{}"}}]}}]}`)(w, r)
					return
				}
				rawSSE(data(`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"g1","type":"function","function":{"name":"bash","arguments":"{}"},"extra_content":{"google":{"thought_signature":"SIG1"}}}]}}]}`),
					data(`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"g2","type":"function","function":{"name":"bash","arguments":"{}"}}]}}]}`),
					data(`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`), data("[DONE]"))(w, r)
			}))
			defer srv.Close()
			c, _ := newTestClient(t, srv.URL, stream)
			resp, err := ask(c, nil)
			if err != nil || len(resp.Message.ToolCalls) != 2 {
				t.Fatalf("resp %+v err %v", resp, err)
			}
			msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "hi"}, resp.Message,
				toolMessage("g1", "ok"), toolMessage("g2", "ok"),
				// An older turn, from a process that never saw its signature.
				{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "old", Type: "function", Function: openai.FunctionCall{Name: "bash", Arguments: "{}"}}}},
				toolMessage("old", "ok")}
			if _, err := c.Complete(context.Background(), Request{Agent: "a", Messages: msgs}); err != nil {
				t.Fatal(err)
			}
			got := sentSignatures(t, bodies[1])
			if fmt.Sprint(got) != "[[SIG1 ] [skip_thought_signature_validator]]" {
				t.Errorf("signatures sent back %q", got)
			}
		})
	}
	t.Run("refused before any signature was seen", func(t *testing.T) {
		var bodies [][]byte
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			bodies = append(bodies, b)
			if !strings.Contains(string(b), skipSignature) {
				status(400, nil, `[{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts.","status":"INVALID_ARGUMENT"}}]`)(w, r)
				return
			}
			status(200, nil, okJSON)(w, r)
		}))
		defer srv.Close()
		c, log := newTestClient(t, srv.URL, false)
		msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "hi"},
			{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "old", Type: "function", Function: openai.FunctionCall{Name: "bash", Arguments: "{}"}}}},
			toolMessage("old", "ok")}
		resp, err := c.Complete(context.Background(), Request{Agent: "a", Messages: msgs})
		if err != nil || resp.Message.Content != "done" || len(bodies) != 2 || log.count() != 0 {
			t.Fatalf("resp %+v err %v requests %d retries %d", resp, err, len(bodies), log.count())
		}
	})
}

func TestToolCallsWrittenAsText(t *testing.T) {
	declared := []openai.Tool{{Type: "function", Function: &openai.FunctionDefinition{Name: "bash"}},
		{Type: "function", Function: &openai.FunctionDefinition{Name: "write_file"}}}
	tests := []struct {
		name, content string
		want          []string // "name args"
		text          string
	}{
		{"one hermes block", "Let me look.\n<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>",
			[]string{`bash {"command": "ls"}`}, "Let me look."},
		{"two blocks, string arguments", "<tool_call>{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}</tool_call>\n<tool_call>{\"name\":\"write_file\",\"arguments\":{\"path\":\"a\"}}</tool_call>",
			[]string{`bash {"command":"ls"}`, `write_file {"path":"a"}`}, ""},
		{"last block left open", "<tool_call>\n{\"name\": \"bash\", \"arguments\": {}}\n", []string{`bash {}`}, ""},
		{"an undeclared tool stays text", "<tool_call>{\"name\":\"fly\",\"arguments\":{}}</tool_call>", nil, "<tool_call>{\"name\":\"fly\",\"arguments\":{}}</tool_call>"},
		{"a block that does not parse stays text", "see <tool_call>{oops}</tool_call>", nil, "see <tool_call>{oops}</tool_call>"},
		{"no block", "plain answer", nil, "plain answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := Response{Message: openai.ChatCompletionMessage{Role: "assistant", Content: tt.content}, FinishReason: "stop"}
			textToolCalls(&resp, declared)
			var got []string
			for _, tc := range resp.Message.ToolCalls {
				got = append(got, tc.Function.Name+" "+tc.Function.Arguments)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) || resp.Message.Content != tt.text {
				t.Errorf("calls %q content %q", got, resp.Message.Content)
			}
			if len(tt.want) > 0 && resp.FinishReason != "tool_calls" {
				t.Errorf("finish %q", resp.FinishReason)
			}
		})
	}
}

// TestReasoningGoesBackOnlyWithCalls: DeepSeek wants the reasoning of a turn
// that called tools sent back; the rest is dropped from the request.
func TestReasoningGoesBackOnlyWithCalls(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		status(200, nil, okJSON)(w, r)
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, false)
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "hi"},
		{Role: "assistant", Content: "hello", ReasoningContent: "greet back"},
		{Role: "user", Content: "list"},
		{Role: "assistant", ReasoningContent: "use bash", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "bash", Arguments: "{}"}}}},
		toolMessage("c1", "a b")}
	if _, err := c.Complete(context.Background(), Request{Agent: "a", Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "greet back") || !strings.Contains(string(body), `"reasoning_content":"use bash"`) {
		t.Errorf("request %s", body)
	}
	if msgs[1].ReasoningContent != "greet back" {
		t.Error("the caller's conversation was changed")
	}
}

func toolMessage(id, content string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: content}
}
