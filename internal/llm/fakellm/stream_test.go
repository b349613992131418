package fakellm

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

var twoCalls = []ToolCall{
	{ID: "call_a", Name: "send_message", Args: `{"to":"bob","content":"hello bob, how are you"}`},
	{ID: "call_b", Name: "bash", Args: `{"command":"go test ./..."}`},
}

// recvAll reads a whole stream through go-openai's real client.
func recvAll(t *testing.T, s *Server, req openai.ChatCompletionRequest) []openai.ChatCompletionStreamResponse {
	t.Helper()
	stream, err := client(s, "lead", "").CreateChatCompletionStream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	var chunks []openai.ChatCompletionStreamResponse
	for {
		ch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return chunks
		}
		if err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, ch)
	}
}

// split separates a stream into content pieces and tool-call deltas.
func split(chunks []openai.ChatCompletionStreamResponse) (pieces []string, deltas []openai.ToolCall) {
	for _, ch := range chunks {
		for _, c := range ch.Choices {
			if c.Delta.Content != "" {
				pieces = append(pieces, c.Delta.Content)
			}
			deltas = append(deltas, c.Delta.ToolCalls...)
		}
	}
	return pieces, deltas
}

func checkAssembled(t *testing.T, deltas []openai.ToolCall) {
	t.Helper()
	got := assemble(t, deltas)
	if len(got) != len(twoCalls) {
		t.Fatalf("assembled %d calls, want %d: %+v", len(got), len(twoCalls), got)
	}
	for i, want := range twoCalls {
		if got[i] != assembled(want) {
			t.Fatalf("call %d = %+v, want %+v", i, got[i], want)
		}
	}
}

func TestStreamSplitsContentAndArguments(t *testing.T) {
	s := New(Always(Reply{Content: "Working on it, two calls follow.", ToolCalls: twoCalls,
		Usage: &openai.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}}))
	defer s.Close()
	req := request("go")
	req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	chunks := recvAll(t, s, req)

	pieces, deltas := split(chunks)
	if len(pieces) < 2 || strings.Join(pieces, "") != "Working on it, two calls follow." {
		t.Fatalf("content pieces %q", pieces)
	}
	perCall := map[int]int{}
	for _, d := range deltas {
		perCall[*d.Index]++
		if d.Function.Name != "" { // the head chunk of a call
			if d.ID == "" || d.Type != openai.ToolTypeFunction || d.Function.Arguments != "" {
				t.Fatalf("head chunk %+v lacks id/type or carries arguments", d)
			}
		} else if d.ID != "" || d.Type != "" {
			t.Fatalf("argument chunk %+v repeats id or type", d)
		}
	}
	if perCall[0] < 3 || perCall[1] < 3 {
		t.Fatalf("each call should come in a head and several argument chunks: %v", perCall)
	}
	checkAssembled(t, deltas)

	last := chunks[len(chunks)-1]
	if last.Usage == nil || last.Usage.TotalTokens != 15 || len(last.Choices) != 0 {
		t.Fatalf("last chunk should carry only usage: %+v", last)
	}
	finish := chunks[len(chunks)-2].Choices[0].FinishReason
	if finish != openai.FinishReasonToolCalls {
		t.Fatalf("finish reason %q", finish)
	}
}

func TestStreamWithoutIncludeUsageHasNoUsageChunk(t *testing.T) {
	s := New(Always(Reply{Content: "hi"}))
	defer s.Close()
	for _, ch := range recvAll(t, s, request("go")) {
		if ch.Usage != nil {
			t.Fatalf("usage sent without stream_options.include_usage: %+v", ch)
		}
	}
}

func TestStreamRepeatIndexZero(t *testing.T) {
	s := New(Always(Reply{ToolCalls: twoCalls, RepeatIndexZero: true}))
	defer s.Close()
	_, deltas := split(recvAll(t, s, request("go")))
	ids := 0
	for _, d := range deltas {
		if *d.Index != 0 {
			t.Fatalf("delta with index %d, want every index 0", *d.Index)
		}
		if d.ID != "" {
			ids++
		}
	}
	if ids != 2 {
		t.Fatalf("ids sent %d times, want once per call", ids)
	}
	checkAssembled(t, deltas)
}

func TestStreamIDsInEveryChunk(t *testing.T) {
	s := New(Always(Reply{ToolCalls: twoCalls, IDsInEveryChunk: true}))
	defer s.Close()
	_, deltas := split(recvAll(t, s, request("go")))
	for _, d := range deltas {
		want := twoCalls[*d.Index].ID
		if d.ID != want {
			t.Fatalf("delta %+v: id %q, want %q on every chunk", d, d.ID, want)
		}
	}
	if len(deltas) < 6 {
		t.Fatalf("only %d deltas", len(deltas))
	}
	checkAssembled(t, deltas)
}

func TestDropMidStream(t *testing.T) {
	s := New(Always(Reply{Content: "this answer will never finish", DropMidStream: true}))
	defer s.Close()
	stream, err := client(s, "lead", "").CreateChatCompletionStream(context.Background(), request("go"))
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	got := 0
	for {
		_, err = stream.Recv()
		if err != nil {
			break
		}
		got++
	}
	if errors.Is(err, io.EOF) || got != 2 {
		t.Fatalf("after %d chunks got %v, want a broken stream after 2", got, err)
	}

	_, err = client(s, "lead", "").CreateChatCompletion(context.Background(), request("go"))
	if err == nil {
		t.Fatal("non-streaming drop should fail to decode")
	}
}
