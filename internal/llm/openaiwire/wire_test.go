package openaiwire

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

func TestSplitKeepsCharactersWhole(t *testing.T) {
	for _, s := range []string{"", "abc", "héllo wörld — ünïcode 日本語テキスト", strings.Repeat("x", 17)} {
		for size := 1; size <= 9; size++ {
			pieces := Split(s, size)
			if got := strings.Join(pieces, ""); got != s {
				t.Fatalf("Split(%q,%d) joined = %q", s, size, got)
			}
			for _, p := range pieces {
				if !utf8.ValidString(p) || p == "" {
					t.Fatalf("Split(%q,%d) gave bad piece %q", s, size, p)
				}
				if len(p) > size && utf8.RuneCountInString(p) > 1 {
					t.Fatalf("Split(%q,%d) piece %q too long", s, size, p)
				}
			}
		}
	}
}

func TestWriteErrorShape(t *testing.T) {
	rec := httptest.NewRecorder()
	WriteError(rec, 429, TypeRateLimit, "rate_limit_exceeded", "slow down")
	if rec.Code != 429 || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	var body openai.ErrorResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == nil {
		t.Fatalf("body %q: %v", rec.Body.String(), err)
	}
	if body.Error.Message != "slow down" || body.Error.Type != TypeRateLimit || body.Error.Code != "rate_limit_exceeded" {
		t.Fatalf("decoded %+v", body.Error)
	}
	rec = httptest.NewRecorder()
	WriteError(rec, 400, TypeInvalidRequest, "", "bad")
	if !strings.Contains(rec.Body.String(), `"code":null`) {
		t.Fatalf("empty code should be null: %s", rec.Body.String())
	}
}

func TestParseRequest(t *testing.T) {
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]}]}`
	req, err := ParseRequest(httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body)))
	if err != nil {
		t.Fatal(err)
	}
	if !req.Stream || req.StreamOptions == nil || !req.StreamOptions.IncludeUsage || len(req.Messages) != 2 || req.Messages[1].ToolCalls[0].ID != "c1" {
		t.Fatalf("parsed %+v", req)
	}
	if _, err := ParseRequest(httptest.NewRequest(http.MethodPost, "/", strings.NewReader("<html>"))); err == nil {
		t.Fatal("want error for a non-JSON body")
	}
	if _, err := ParseRequest(httptest.NewRequest(http.MethodGet, "/", nil)); err == nil {
		t.Fatal("want error for GET")
	}
}

func TestWriteStreamFormat(t *testing.T) {
	c := Completion{ID: "x", Content: "hello there", Usage: openai.Usage{TotalTokens: 7},
		ToolCalls: []openai.ToolCall{{ID: "c1", Function: openai.FunctionCall{Name: "bash", Arguments: `{"command":"ls -la"}`}}}}
	rec := httptest.NewRecorder()
	if err := WriteStream(context.Background(), rec, c, StreamOptions{IncludeUsage: true, PieceSize: 4}); err != nil {
		t.Fatal(err)
	}
	out := rec.Body.String()
	if rec.Header().Get("Content-Type") != "text/event-stream" || !strings.HasSuffix(out, "data: [DONE]\n\n") {
		t.Fatalf("bad stream framing: %q", out)
	}
	events := strings.Split(strings.TrimSuffix(out, "\n\n"), "\n\n")
	// role + 3 content + call head + 5 argument pieces + finish + usage + [DONE]
	if len(events) != 1+3+1+5+1+1+1 {
		t.Fatalf("got %d events:\n%s", len(events), out)
	}
	last := events[len(events)-2]
	if !strings.Contains(last, `"choices":[]`) || !strings.Contains(last, `"total_tokens":7`) {
		t.Fatalf("usage chunk = %s", last)
	}

	rec = httptest.NewRecorder()
	err := WriteStream(context.Background(), rec, c, StreamOptions{StopAfter: 2})
	if !errors.Is(err, ErrStopped) || strings.Count(rec.Body.String(), "data: ") != 2 || strings.Contains(rec.Body.String(), "[DONE]") {
		t.Fatalf("StopAfter: err %v body %q", err, rec.Body.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := WriteStream(ctx, httptest.NewRecorder(), c, StreamOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled ctx: err %v", err)
	}
}

func TestWriteJSONRoundTrip(t *testing.T) {
	rec := httptest.NewRecorder()
	c := Completion{Content: "hi", ToolCalls: []openai.ToolCall{{ID: "c1", Function: openai.FunctionCall{Name: "bash", Arguments: "{}"}}}}
	if err := WriteJSON(rec, c); err != nil {
		t.Fatal(err)
	}
	var resp openai.ChatCompletionResponse
	if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
		t.Fatal(err)
	}
	ch := resp.Choices[0]
	if ch.FinishReason != openai.FinishReasonToolCalls || ch.Message.ToolCalls[0].Type != openai.ToolTypeFunction || ch.Message.Content != "hi" {
		t.Fatalf("decoded %+v", resp)
	}
}
