package fakellm

import (
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// agentTransport stamps every request with the agent header, as agentteam's model client does.
type agentTransport struct {
	agent string
}

func (t agentTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(AgentHeader, t.agent)
	return http.DefaultTransport.RoundTrip(r)
}

func client(s *Server, agent, key string) *openai.Client {
	cfg := openai.DefaultConfig(key)
	cfg.BaseURL = s.URL()
	cfg.HTTPClient = &http.Client{Transport: agentTransport{agent: agent}}
	return openai.NewClientWithConfig(cfg)
}

func tool(name string) openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name,
		Parameters: map[string]any{"type": "object"}}}
}

func request(msgs ...string) openai.ChatCompletionRequest {
	req := openai.ChatCompletionRequest{Model: "fake-model",
		Tools: []openai.Tool{tool("send_message"), tool("bash"), tool("read_inbox")}}
	req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: "system", Content: "you are a test"})
	for _, m := range msgs {
		req.Messages = append(req.Messages, openai.ChatCompletionMessage{Role: "user", Content: m})
	}
	return req
}

// assembled is a tool call rebuilt from stream deltas.
type assembled struct{ ID, Name, Args string }

// assemble rebuilds tool calls from deltas keyed by index, starting a new
// call when a delta brings an id different from the current one at that index.
func assemble(t *testing.T, deltas []openai.ToolCall) []assembled {
	t.Helper()
	var out []assembled
	slot := map[int]int{} // stream index → position in out
	for _, d := range deltas {
		if d.Index == nil {
			t.Fatalf("tool call delta without index: %+v", d)
		}
		pos, ok := slot[*d.Index]
		if !ok || (d.ID != "" && d.ID != out[pos].ID) {
			out = append(out, assembled{ID: d.ID})
			pos = len(out) - 1
			slot[*d.Index] = pos
		}
		out[pos].Name += d.Function.Name
		out[pos].Args += d.Function.Arguments
	}
	return out
}

func contains(list []string, frag string) bool {
	for _, s := range list {
		if strings.Contains(s, frag) {
			return true
		}
	}
	return false
}
