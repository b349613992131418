package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// BenchmarkStreamAssembly: one reply of 200 content chunks and two tool calls of 100 argument chunks each.
func BenchmarkStreamAssembly(b *testing.B) {
	var chunks []wireChunk
	chunk := func(d openai.ChatCompletionStreamChoiceDelta) {
		j, _ := json.Marshal(openai.ChatCompletionStreamResponse{Choices: []openai.ChatCompletionStreamChoice{{Delta: d}}})
		var w wireChunk
		if err := json.Unmarshal(j, &w); err != nil {
			b.Fatal(err)
		}
		chunks = append(chunks, w)
	}
	for i := range 200 {
		chunk(openai.ChatCompletionStreamChoiceDelta{Content: fmt.Sprintf("word%d ", i)})
	}
	for call := range 2 {
		chunk(callDelta(idx(0), fmt.Sprintf("c%d", call), "write_file", `{"content":"`))
		for range 100 {
			chunk(callDelta(idx(0), "", "", "abcdefgh"))
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		a := newAssembler("alice", func(Delta) {}, bounds{})
		for i := range chunks {
			a.add(&chunks[i])
		}
		if r := a.response(); len(r.Message.ToolCalls) != 2 {
			b.Fatal("wrong assembly")
		}
	}
}

// cannedSSE answers every request with the same server-sent event stream, with no network.
type cannedSSE []byte

func (c cannedSSE) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		_ = r.Body.Close()
	}
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(c)), Request: r}, nil
}

// BenchmarkStreamTurn: the whole streaming path of one turn (request, SSE
// reading, decoding, assembly) for the reply of BenchmarkStreamAssembly.
func BenchmarkStreamTurn(b *testing.B) {
	var body bytes.Buffer
	chunk := func(d openai.ChatCompletionStreamChoiceDelta, finish string) {
		j, _ := json.Marshal(openai.ChatCompletionStreamResponse{ID: "chatcmpl-1", Object: "chat.completion.chunk", Model: "m",
			Choices: []openai.ChatCompletionStreamChoice{{Delta: d, FinishReason: openai.FinishReason(finish)}}})
		fmt.Fprintf(&body, "data: %s\n\n", j)
	}
	for i := range 200 {
		chunk(openai.ChatCompletionStreamChoiceDelta{Content: fmt.Sprintf("word%d ", i)}, "")
	}
	for call := range 2 {
		chunk(callDelta(idx(call), fmt.Sprintf("c%d", call), "write_file", `{"content":"`), "")
		for range 100 {
			chunk(callDelta(idx(call), "", "", "abcdefgh"), "")
		}
		chunk(callDelta(idx(call), "", "", `"}`), "")
	}
	chunk(openai.ChatCompletionStreamChoiceDelta{}, "tool_calls")
	fmt.Fprintf(&body, "data: %s\n\ndata: [DONE]\n\n", usageChunk)
	c := NewClient(ClientConfig{BaseURL: "http://model.invalid/v1", APIKey: "k", Model: "m", Stream: true,
		HTTPClient: &http.Client{Transport: cannedSSE(body.Bytes())}})
	req := Request{Agent: "alice", Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}},
		OnDelta: func(Delta) {}}
	b.ReportAllocs()
	for b.Loop() {
		r, err := c.Complete(context.Background(), req)
		if err != nil || len(r.Message.ToolCalls) != 2 || r.Usage.TotalTokens != 10 {
			b.Fatal("wrong turn", err)
		}
	}
}
