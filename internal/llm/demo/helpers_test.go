package demo

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

type agentTransport struct {
	agent string
	base  http.RoundTripper
}

func (t agentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(agentHeader, t.agent)
	return t.base.RoundTrip(r)
}

// client is go-openai's real client wired to the demo, as agentteam wires it.
func client(agent string) *openai.Client {
	cfg := openai.DefaultConfig("")
	cfg.BaseURL = BaseURL
	cfg.HTTPClient = &http.Client{Transport: agentTransport{agent: agent, base: NewHTTPClient().Transport}}
	return openai.NewClientWithConfig(cfg)
}

var (
	leadTools     = []string{"spawn_teammate", "list_teammates", "send_message", "broadcast", "read_inbox", "bash", "read_file", "write_file", "edit_file"}
	teammateTools = []string{"send_message", "read_inbox", "bash", "read_file", "write_file", "edit_file"}
)

func conv(tools []string, msgs ...openai.ChatCompletionMessage) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: "demo", Messages: msgs}
	for _, n := range tools {
		req.Tools = append(req.Tools, openai.Tool{Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{Name: n, Parameters: map[string]any{"type": "object"}}})
	}
	return req
}

func sys(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "system", Content: s}
}
func user(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "user", Content: s}
}
func said(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: "assistant", Content: s}
}
func inbox(from, typ, content string) string {
	return `<message from="` + from + `" type="` + typ + `" id="01J">` + "\n" + content + "\n</message>"
}

// turn is one model turn as the client assembled it.
type turn struct {
	content string
	calls   []openai.ToolCall
	usage   *openai.Usage
	chunks  int
}

// ask runs one model turn through go-openai, streaming or not.
func ask(t testing.TB, agent string, stream bool, req openai.ChatCompletionRequest) turn {
	t.Helper()
	ctx := context.Background()
	if !stream {
		resp, err := client(agent).CreateChatCompletion(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return turn{content: resp.Choices[0].Message.Content, calls: resp.Choices[0].Message.ToolCalls, usage: &resp.Usage}
	}
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	s, err := client(agent).CreateChatCompletionStream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var out turn
	for {
		ch, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out.chunks++
		if ch.Usage != nil {
			out.usage = ch.Usage
		}
		for _, c := range ch.Choices {
			out.content += c.Delta.Content
			for _, d := range c.Delta.ToolCalls {
				for len(out.calls) <= *d.Index {
					out.calls = append(out.calls, openai.ToolCall{Type: openai.ToolTypeFunction})
				}
				tc := &out.calls[*d.Index]
				if d.ID != "" {
					tc.ID = d.ID
				}
				tc.Function.Name += d.Function.Name
				tc.Function.Arguments += d.Function.Arguments
			}
		}
	}
}

// then appends the assistant turn and a tool result for each of its calls.
func then(req openai.ChatCompletionRequest, tr turn, results ...string) openai.ChatCompletionRequest {
	req.Messages = append(append([]openai.ChatCompletionMessage(nil), req.Messages...),
		openai.ChatCompletionMessage{Role: "assistant", Content: tr.content, ToolCalls: tr.calls})
	for i, c := range tr.calls {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: "tool", ToolCallID: c.ID, Content: results[i]})
	}
	return req
}
