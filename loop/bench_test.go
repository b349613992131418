package loop

import (
	"fmt"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// BenchmarkStreamAssembly: one reply of 200 content chunks and two tool calls of 100 argument chunks each.
func BenchmarkStreamAssembly(b *testing.B) {
	var chunks []openai.ChatCompletionStreamResponse
	chunk := func(d openai.ChatCompletionStreamChoiceDelta) {
		chunks = append(chunks, openai.ChatCompletionStreamResponse{Choices: []openai.ChatCompletionStreamChoice{{Delta: d}}})
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
		a := newAssembler("alice", func(Delta) {})
		for _, c := range chunks {
			a.add(c)
		}
		if r := a.response(); len(r.Message.ToolCalls) != 2 {
			b.Fatal("wrong assembly")
		}
	}
}
