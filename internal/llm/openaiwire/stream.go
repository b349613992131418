package openaiwire

import (
	"bytes"
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
	// Quirks bend the stream the way some real servers do.
	Quirks
}

// Wire shapes of a chunk, spelled out so that omitted fields stay omitted
// (go-openai's ToolCall always writes "type").
type chunk struct {
	ID                  string          `json:"id"`
	Object              string          `json:"object"`
	Created             int64           `json:"created"`
	Model               string          `json:"model"`
	PromptFilterResults json.RawMessage `json:"prompt_filter_results,omitempty"`
	Choices             []chunkChoice   `json:"choices"`
	Usage               *openai.Usage   `json:"usage,omitempty"`
	XGroq               *xGroq          `json:"x_groq,omitempty"`
	Error               *InBandError    `json:"error,omitempty"`
}

type chunkChoice struct {
	Index int `json:"index"`
	// Delta is nil in Azure's last annotation chunk.
	Delta                *chunkDelta     `json:"delta,omitempty"`
	FinishReason         *string         `json:"finish_reason"`
	ContentFilterResults json.RawMessage `json:"content_filter_results,omitempty"`
	ContentFilterOffsets json.RawMessage `json:"content_filter_offsets,omitempty"`
}

type chunkDelta struct {
	Role             string         `json:"role,omitempty"`
	Content          string         `json:"content,omitempty"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	Reasoning        string         `json:"reasoning,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

// chunks returns the data chunks of c's stream, without the final [DONE].
func chunks(c Completion, o StreamOptions) []chunk {
	size := o.PieceSize
	if size <= 0 {
		size = 8
	}
	q := o.Quirks
	created := time.Now().Unix()
	mk := func(d chunkDelta, finish *string) chunk {
		return chunk{ID: c.id(), Object: "chat.completion.chunk", Created: created, Model: c.Model,
			Choices: []chunkChoice{{Index: 0, Delta: &d, FinishReason: finish, ContentFilterResults: q.filterResults(finish != nil)}}}
	}
	var out []chunk
	if q.AzureFilters {
		// Azure's first chunk: the prompt's filter results, no choices, no id.
		out = append(out, chunk{Choices: []chunkChoice{}, PromptFilterResults: q.promptFilterResults()})
	}
	out = append(out, mk(chunkDelta{Role: openai.ChatMessageRoleAssistant}, nil))
	for _, p := range Split(c.Reasoning, size) {
		var m wireMessage
		setReasoning(&m, p, q)
		out = append(out, mk(chunkDelta{ReasoningContent: m.ReasoningContent, Reasoning: m.Reasoning}, nil))
	}
	for _, p := range Split(c.content(q), size) {
		out = append(out, mk(chunkDelta{Content: p}, nil))
	}
	if q.InBandError != nil {
		finish := "error"
		ch := mk(chunkDelta{}, &finish)
		ch.Error = q.InBandError
		return append(out, ch)
	}
	for i, tc := range c.calls(q) {
		var idx *int
		if !q.NoIndex {
			n := i
			if o.RepeatIndexZero {
				n = 0
			}
			idx = &n
		}
		head := wireToolCall{Index: idx, ID: tc.ID, Type: string(openai.ToolTypeFunction),
			Function: wireFunction{Name: tc.Function.Name, Arguments: arguments("", q)}, ExtraContent: c.signature(i)}
		if q.WholeCalls || q.ArgsAsObject {
			head.Function.Arguments = arguments(tc.Function.Arguments, q)
			out = append(out, mk(chunkDelta{ToolCalls: []wireToolCall{head}}, nil))
			continue
		}
		out = append(out, mk(chunkDelta{ToolCalls: []wireToolCall{head}}, nil))
		for _, p := range Split(tc.Function.Arguments, size) {
			next := wireToolCall{Index: idx, Function: wireFunction{Arguments: arguments(p, Quirks{})}}
			if o.IDsInEveryChunk {
				next.ID = tc.ID
			}
			out = append(out, mk(chunkDelta{ToolCalls: []wireToolCall{next}}, nil))
		}
	}
	if q.NoFinish {
		return out
	}
	finish := c.finishReason(q)
	out = append(out, mk(chunkDelta{}, &finish))
	if q.AzureFilters {
		// The asynchronous filter's verdict on the text, after the finish.
		n := len(c.content(q))
		out = append(out, chunk{Choices: []chunkChoice{{Index: 0, ContentFilterResults: q.filterResults(true),
			ContentFilterOffsets: json.RawMessage(fmt.Sprintf(`{"check_offset":%d,"start_offset":0,"end_offset":%d}`, n, n))}}})
	}
	if o.IncludeUsage || q.UsageInXGroq {
		u := c.Usage
		last := chunk{ID: c.id(), Object: "chat.completion.chunk", Created: created, Model: c.Model,
			Choices: []chunkChoice{}, Usage: &u}
		if q.UsageInXGroq {
			last.Usage, last.XGroq = nil, &xGroq{ID: "req_" + c.id(), Usage: &u}
		}
		out = append(out, last)
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
	write := func(b []byte) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("stream abandoned: %w", err)
		}
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("writing stream chunk: %w", err)
		}
		if flusher != nil {
			flusher.Flush()
		}
		return nil
	}
	send := func(payload []byte) error {
		return write(fmt.Appendf(nil, "data: %s\n\n", payload))
	}
	if o.KeepAlives > 0 {
		line := o.KeepAlive
		if line == "" {
			line = ": OPENROUTER PROCESSING"
		}
		if err := write(bytes.Repeat([]byte(line+"\n\n"), o.KeepAlives)); err != nil {
			return err
		}
	}
	for i, ch := range chunks(c, o) {
		if o.StopAfter > 0 && i >= o.StopAfter {
			return ErrStopped
		}
		if o.StallAfter > 0 && i >= o.StallAfter {
			<-ctx.Done()
			return fmt.Errorf("stream abandoned: %w", ctx.Err())
		}
		b, err := json.Marshal(ch)
		if err != nil {
			return fmt.Errorf("encoding stream chunk: %w", err)
		}
		if o.MultiLineData {
			var event bytes.Buffer
			_ = json.Indent(&event, b, "", "  ")
			err = write(append(bytes.ReplaceAll(append([]byte("data: "), event.Bytes()...), []byte("\n"), []byte("\ndata: ")), "\n\n"...))
		} else {
			err = send(b)
		}
		if err != nil {
			return err
		}
	}
	switch {
	case o.NoFinish:
		return nil
	case o.NoDone:
		<-ctx.Done() // the connection stays open until the client leaves
		return nil
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
