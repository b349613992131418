package openaiwire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// ErrStopped is returned by WriteStream when StopAfter cut the stream short.
var ErrStopped = errors.New("stream stopped before its end")

// StreamOptions shape an SSE answer, including the quirks of some servers.
type StreamOptions struct {
	// IncludeUsage sends a final chunk with usage and no choices
	// (the request's stream_options.include_usage).
	IncludeUsage bool
	// RepeatIndexZero gives every parallel tool call index 0; only the id
	// on each call's first chunk tells the calls apart.
	RepeatIndexZero bool
	// IDsInEveryChunk repeats a call's id on every chunk of that call.
	IDsInEveryChunk bool
	// PieceSize is the most bytes of content or arguments in one chunk (default 8).
	PieceSize int
	// StopAfter, when > 0, ends the stream after that many data chunks,
	// without [DONE], and WriteStream returns ErrStopped.
	StopAfter int
}

// Wire shapes of a chunk, spelled out so that omitted fields stay omitted
// (go-openai's ToolCall always writes "type").
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *openai.Usage `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

type chunkDelta struct {
	Role      string          `json:"role,omitempty"`
	Content   string          `json:"content,omitempty"`
	ToolCalls []chunkToolCall `json:"tool_calls,omitempty"`
}

type chunkToolCall struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function chunkFunction `json:"function"`
}

type chunkFunction struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

// chunks returns the data chunks of c's stream, without the final [DONE].
func chunks(c Completion, o StreamOptions) []chunk {
	size := o.PieceSize
	if size <= 0 {
		size = 8
	}
	created := time.Now().Unix()
	mk := func(d chunkDelta, finish *string) chunk {
		return chunk{ID: c.id(), Object: "chat.completion.chunk", Created: created, Model: c.Model,
			Choices: []chunkChoice{{Index: 0, Delta: d, FinishReason: finish}}}
	}
	out := []chunk{mk(chunkDelta{Role: openai.ChatMessageRoleAssistant}, nil)}
	for _, p := range Split(c.Content, size) {
		out = append(out, mk(chunkDelta{Content: p}, nil))
	}
	for i, tc := range c.ToolCalls {
		idx := i
		if o.RepeatIndexZero {
			idx = 0
		}
		first := chunkToolCall{Index: idx, ID: tc.ID, Type: string(openai.ToolTypeFunction),
			Function: chunkFunction{Name: tc.Function.Name}}
		out = append(out, mk(chunkDelta{ToolCalls: []chunkToolCall{first}}, nil))
		for _, p := range Split(tc.Function.Arguments, size) {
			next := chunkToolCall{Index: idx, Function: chunkFunction{Arguments: p}}
			if o.IDsInEveryChunk {
				next.ID = tc.ID
			}
			out = append(out, mk(chunkDelta{ToolCalls: []chunkToolCall{next}}, nil))
		}
	}
	finish := string(c.finishReason())
	out = append(out, mk(chunkDelta{}, &finish))
	if o.IncludeUsage {
		u := c.Usage
		out = append(out, chunk{ID: c.id(), Object: "chat.completion.chunk", Created: created, Model: c.Model,
			Choices: []chunkChoice{}, Usage: &u})
	}
	return out
}

// WriteStream answers with c as an SSE stream, flushing every chunk, and
// stops early when ctx ends.
func WriteStream(ctx context.Context, w http.ResponseWriter, c Completion, o StreamOptions) error {
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(payload []byte) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stream abandoned: %w", err)
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", payload); err != nil {
			return fmt.Errorf("writing stream chunk: %w", err)
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	for i, ch := range chunks(c, o) {
		if o.StopAfter > 0 && i >= o.StopAfter {
			return ErrStopped
		}
		b, err := json.Marshal(ch)
		if err != nil {
			return fmt.Errorf("encoding stream chunk: %w", err)
		}
		if err := send(b); err != nil {
			return err
		}
	}
	return send([]byte("[DONE]"))
}

// Split cuts s into pieces of at most size bytes, never inside a UTF-8
// character; an empty s gives no pieces.
func Split(s string, size int) []string {
	if size <= 0 {
		size = 1
	}
	var out []string
	for len(s) > 0 {
		n := min(size, len(s))
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 { // a character wider than size: take it whole
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}
