package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// retryLog records OnRetry calls; the client's sleep is stubbed so tests never wait.
type retryLog struct {
	mu    sync.Mutex
	waits []time.Duration
	errs  []error
	all   []Retry
}

func (r *retryLog) onRetry(rt Retry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.waits = append(r.waits, rt.Wait)
	r.errs = append(r.errs, rt.Err)
	r.all = append(r.all, rt)
}

func (r *retryLog) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.waits)
}

func newTestClient(t *testing.T, url string, stream bool) (*Client, *retryLog) {
	t.Helper()
	log := &retryLog{}
	c := NewClient(ClientConfig{
		BaseURL: url + "/v1", APIKey: "sk-test", Model: "m", Stream: stream,
		MaxRetries: 3, BaseDelay: 10 * time.Millisecond, MaxDelay: 100 * time.Millisecond,
		OnRetry: log.onRetry,
	})
	c.policy.sleep = func(ctx context.Context, d time.Duration) error { return ctx.Err() }
	return c, log
}

// oneServer is a test server that answers with handlers in turn, and a
// client of it; the server closes when the test ends.
func oneServer(t *testing.T, stream bool, handlers ...http.HandlerFunc) (*scripted, *Client, *retryLog) {
	t.Helper()
	s := &scripted{steps: handlers}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	c, log := newTestClient(t, srv.URL, stream)
	return s, c, log
}

func ask(c *Client, onDelta func(Delta)) (Response, error) {
	return c.Complete(context.Background(), Request{
		Agent:    "alice",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hi"}},
		OnDelta:  onDelta,
	})
}

// sse writes chunks as server-sent events, then [DONE].
func sse(w http.ResponseWriter, chunks ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, c := range chunks {
		fmt.Fprintf(w, "data: %s\n\n", c)
		w.(http.Flusher).Flush()
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func idx(i int) *int { return &i }

// madeUp in a wanted tool call stands for an id the client made up, which
// must be 9 letters and digits (some servers accept no other form).
const madeUp = "<made up>"

var madeID = regexp.MustCompile(`^[A-Za-z0-9]{9}$`)

func chunkJSON(t *testing.T, delta openai.ChatCompletionStreamChoiceDelta, finish string) string {
	t.Helper()
	b, err := json.Marshal(openai.ChatCompletionStreamResponse{
		ID: "x", Object: "chat.completion.chunk",
		Choices: []openai.ChatCompletionStreamChoice{{Delta: delta, FinishReason: openai.FinishReason(finish)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func callDelta(i *int, id, name, args string) openai.ChatCompletionStreamChoiceDelta {
	return openai.ChatCompletionStreamChoiceDelta{ToolCalls: []openai.ToolCall{{
		Index: i, ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: args},
	}}}
}

const usageChunk = `{"id":"x","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`

func TestCompleteNonStream(t *testing.T) {
	var gotAgent, gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAgent, gotAuth = r.Header.Get(AgentHeader), r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"ok",
			"tool_calls":[{"type":"function","function":{"name":"bash","arguments":""}}]}}],
			"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`)
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, false)
	resp, err := ask(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if gotAgent != "alice" || gotAuth != "Bearer sk-test" {
		t.Errorf("headers: agent %q auth %q", gotAgent, gotAuth)
	}
	m := resp.Message
	if m.Role != "assistant" || m.Content != "ok" || resp.Usage.TotalTokens != 7 || resp.FinishReason != "tool_calls" {
		t.Errorf("response = %+v", resp)
	}
	if len(m.ToolCalls) != 1 || !madeID.MatchString(m.ToolCalls[0].ID) || m.ToolCalls[0].Function.Arguments != "{}" {
		t.Errorf("tool calls = %+v", m.ToolCalls)
	}
}

func TestCompleteStreamAssembly(t *testing.T) {
	tests := []struct {
		name   string
		chunks func(t *testing.T) []string
		want   []openai.ToolCall // Index nil, Type function
		names  []string          // ToolName deltas in order
	}{
		{
			name: "args split across many chunks",
			chunks: func(t *testing.T) []string {
				out := []string{chunkJSON(t, callDelta(idx(0), "c1", "write_file", ""), "")}
				for _, p := range []string{`{"pa`, `th":"a`, `.txt","con`, `tent":"hi`, `"}`} {
					out = append(out, chunkJSON(t, callDelta(idx(0), "", "", p), ""))
				}
				return out
			},
			want:  []openai.ToolCall{{ID: "c1", Function: openai.FunctionCall{Name: "write_file", Arguments: `{"path":"a.txt","content":"hi"}`}}},
			names: []string{"write_file"},
		},
		{
			name: "two parallel calls both at index 0",
			chunks: func(t *testing.T) []string {
				return []string{
					chunkJSON(t, callDelta(idx(0), "c1", "read_file", `{"path":`), ""),
					chunkJSON(t, callDelta(idx(0), "", "", `"a"}`), ""),
					chunkJSON(t, callDelta(idx(0), "c2", "read_file", `{"path":`), ""),
					chunkJSON(t, callDelta(idx(0), "", "", `"b"}`), ""),
				}
			},
			want: []openai.ToolCall{
				{ID: "c1", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}},
				{ID: "c2", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"b"}`}},
			},
			names: []string{"read_file", "read_file"},
		},
		{
			name: "id and name in every chunk",
			chunks: func(t *testing.T) []string {
				return []string{
					chunkJSON(t, callDelta(idx(0), "c1", "bash", `{"comm`), ""),
					chunkJSON(t, callDelta(idx(0), "c1", "bash", `and":"ls"}`), ""),
					chunkJSON(t, callDelta(idx(1), "c2", "bash", `{"command":`), ""),
					chunkJSON(t, callDelta(idx(1), "c2", "bash", `"pwd"}`), ""),
				}
			},
			want: []openai.ToolCall{
				{ID: "c1", Function: openai.FunctionCall{Name: "bash", Arguments: `{"command":"ls"}`}},
				{ID: "c2", Function: openai.FunctionCall{Name: "bash", Arguments: `{"command":"pwd"}`}},
			},
			names: []string{"bash", "bash"},
		},
		{
			name: "nil index matched by id, missing id generated",
			chunks: func(t *testing.T) []string {
				return []string{
					chunkJSON(t, callDelta(nil, "c1", "bash", `{"command":`), ""),
					chunkJSON(t, callDelta(idx(1), "", "list_teammates", ``), ""),
					chunkJSON(t, callDelta(nil, "c1", "", `"ls"}`), ""),
				}
			},
			want: []openai.ToolCall{
				{ID: "c1", Function: openai.FunctionCall{Name: "bash", Arguments: `{"command":"ls"}`}},
				{ID: madeUp, Function: openai.FunctionCall{Name: "list_teammates", Arguments: `{}`}},
			},
			names: []string{"bash", "list_teammates"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := append([]string{chunkJSON(t, openai.ChatCompletionStreamChoiceDelta{Role: "assistant", Content: "Let me "}, "")},
				chunkJSON(t, openai.ChatCompletionStreamChoiceDelta{Content: "look."}, ""))
			chunks = append(chunks, tt.chunks(t)...)
			chunks = append(chunks, chunkJSON(t, openai.ChatCompletionStreamChoiceDelta{}, "tool_calls"), usageChunk)
			var gotStreamOpts atomic.Bool
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var body struct {
					StreamOptions *struct {
						IncludeUsage bool `json:"include_usage"`
					} `json:"stream_options"`
				}
				_ = json.NewDecoder(r.Body).Decode(&body)
				gotStreamOpts.Store(body.StreamOptions != nil && body.StreamOptions.IncludeUsage)
				sse(w, chunks...)
			}))
			defer srv.Close()
			c, _ := newTestClient(t, srv.URL, true)
			var text strings.Builder
			var names []string
			resp, err := ask(c, func(d Delta) {
				if d.Agent != "alice" {
					t.Errorf("delta agent %q", d.Agent)
				}
				text.WriteString(d.Content)
				if d.ToolName != "" {
					names = append(names, d.ToolName)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if !gotStreamOpts.Load() {
				t.Error("stream_options.include_usage not sent")
			}
			if resp.Message.Content != "Let me look." || text.String() != "Let me look." {
				t.Errorf("content %q, streamed %q", resp.Message.Content, text.String())
			}
			if resp.Usage.TotalTokens != 10 || resp.FinishReason != "tool_calls" {
				t.Errorf("usage %+v finish %q", resp.Usage, resp.FinishReason)
			}
			for i := range tt.want {
				tt.want[i].Type = openai.ToolTypeFunction
				if tt.want[i].ID == madeUp && i < len(resp.Message.ToolCalls) {
					if id := resp.Message.ToolCalls[i].ID; madeID.MatchString(id) {
						tt.want[i].ID = id
					}
				}
			}
			got, _ := json.Marshal(resp.Message.ToolCalls)
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Errorf("tool calls\n got %s\nwant %s", got, want)
			}
			if fmt.Sprint(names) != fmt.Sprint(tt.names) {
				t.Errorf("tool name deltas %v, want %v", names, tt.names)
			}
		})
	}
}

// scripted answers requests in order from a list of handlers; the last repeats.
type scripted struct {
	mu    sync.Mutex
	steps []http.HandlerFunc
	n     int
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	i := min(s.n, len(s.steps)-1)
	s.n++
	s.mu.Unlock()
	s.steps[i](w, r)
}

func (s *scripted) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func status(code int, header map[string]string, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

const okJSON = `{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"done"}}]}`

func TestCompleteRetries(t *testing.T) {
	overloaded := `{"error":{"message":"overloaded","type":"server_error"}}`
	t.Run("429 honours Retry-After", func(t *testing.T) {
		s := &scripted{steps: []http.HandlerFunc{
			status(429, map[string]string{"Retry-After": "1"}, `{"error":{"message":"slow down"}}`),
			status(200, nil, okJSON),
		}}
		srv := httptest.NewServer(s)
		defer srv.Close()
		c, log := newTestClient(t, srv.URL, false)
		c.policy.maxDelay = 10 * time.Second
		resp, err := ask(c, nil)
		if err != nil || resp.Message.Content != "done" {
			t.Fatalf("resp %+v err %v", resp, err)
		}
		if log.count() != 1 || log.waits[0] != time.Second || !strings.Contains(log.errs[0].Error(), "429") {
			t.Errorf("retries: waits %v errs %v", log.waits, log.errs)
		}
	})
	t.Run("Retry-After capped", func(t *testing.T) {
		s := &scripted{steps: []http.HandlerFunc{
			status(503, map[string]string{"Retry-After": "3600"}, overloaded),
			status(200, nil, okJSON),
		}}
		srv := httptest.NewServer(s)
		defer srv.Close()
		c, log := newTestClient(t, srv.URL, false)
		if _, err := ask(c, nil); err != nil {
			t.Fatal(err)
		}
		if log.waits[0] != 300*time.Millisecond {
			t.Errorf("wait %v, want 3×MaxDelay", log.waits[0])
		}
	})
	t.Run("500 500 success", func(t *testing.T) {
		replayed := func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if !strings.Contains(string(body), `"content":"hi"`) || r.Header.Get(AgentHeader) != "alice" {
				t.Errorf("retried request lost its body or header: %s %v", body, r.Header)
			}
			status(200, nil, okJSON)(w, r)
		}
		s := &scripted{steps: []http.HandlerFunc{status(500, nil, overloaded), status(500, nil, overloaded), replayed}}
		srv := httptest.NewServer(s)
		defer srv.Close()
		c, log := newTestClient(t, srv.URL, false)
		if _, err := ask(c, nil); err != nil {
			t.Fatal(err)
		}
		if s.calls() != 3 || log.count() != 2 {
			t.Errorf("requests %d, retries %d", s.calls(), log.count())
		}
		for _, w := range log.waits {
			if w < 0 || w > 100*time.Millisecond {
				t.Errorf("wait %v outside [0, MaxDelay]", w)
			}
		}
	})
	t.Run("gives up after MaxRetries", func(t *testing.T) {
		s := &scripted{steps: []http.HandlerFunc{status(503, nil, overloaded)}}
		srv := httptest.NewServer(s)
		defer srv.Close()
		c, log := newTestClient(t, srv.URL, false)
		_, err := ask(c, nil)
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), "HTTP 503") {
			t.Fatalf("err = %v", err)
		}
		if s.calls() != 4 || log.count() != 3 {
			t.Errorf("requests %d, retries %d", s.calls(), log.count())
		}
	})
	t.Run("stream dropped mid-way then success", func(t *testing.T) {
		s := &scripted{steps: []http.HandlerFunc{
			func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprintf(w, "data: %s\n\n", chunkJSON(t, openai.ChatCompletionStreamChoiceDelta{Content: "half"}, ""))
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler) // cuts the connection without a clean end
			},
			func(w http.ResponseWriter, r *http.Request) {
				sse(w, chunkJSON(t, openai.ChatCompletionStreamChoiceDelta{Content: "whole"}, "stop"), usageChunk)
			},
		}}
		srv := httptest.NewServer(s)
		defer srv.Close()
		c, log := newTestClient(t, srv.URL, true)
		var shown string
		resp, err := ask(c, func(d Delta) {
			if d.Restart {
				shown = ""
			}
			shown += d.Content
		})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Message.Content != "whole" || shown != "whole" || log.count() != 1 {
			t.Errorf("content %q shown %q retries %d", resp.Message.Content, shown, log.count())
		}
	})
	t.Run("empty stream retried", func(t *testing.T) {
		s := &scripted{steps: []http.HandlerFunc{
			func(w http.ResponseWriter, r *http.Request) { w.Header().Set("Content-Type", "text/event-stream") },
			func(w http.ResponseWriter, r *http.Request) {
				sse(w, chunkJSON(t, openai.ChatCompletionStreamChoiceDelta{Content: "late"}, "stop"))
			},
		}}
		srv := httptest.NewServer(s)
		defer srv.Close()
		c, log := newTestClient(t, srv.URL, true)
		resp, err := ask(c, nil)
		if err != nil || resp.Message.Content != "late" || log.count() != 1 {
			t.Errorf("resp %+v err %v retries %d", resp, err, log.count())
		}
	})
	t.Run("error event in stream is not retried", func(t *testing.T) {
		s := &scripted{steps: []http.HandlerFunc{func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"error\":{\"message\":\"This model's maximum context length is 4096 tokens\"}}\n\n")
		}}}
		srv := httptest.NewServer(s)
		defer srv.Close()
		c, log := newTestClient(t, srv.URL, true)
		_, err := ask(c, nil)
		if !errors.Is(err, ErrContextLength) || log.count() != 0 {
			t.Errorf("err %v retries %d", err, log.count())
		}
	})
	t.Run("connection refused retried then reported", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		ln.Close()
		c, log := newTestClient(t, url, false)
		_, err = ask(c, nil)
		// Nothing listens: two short retries, then one sentence naming the server.
		want := "cannot reach the model server at " + url + "/v1: connection refused"
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "dial tcp") {
			t.Errorf("err %q, want it to start %q without Go's dial text", err, want)
		}
		if log.count() != refusedRetries {
			t.Fatalf("%d retries, want %d", log.count(), refusedRetries)
		}
		for i, w := range log.waits {
			if w < 500*time.Millisecond || w > time.Second {
				t.Errorf("retry %d waits %v, want 500ms..1s (never 0s)", i+1, w)
			}
			if !strings.HasPrefix(log.errs[i].Error(), want) {
				t.Errorf("retry %d says %q, want %q", i+1, log.errs[i], want)
			}
		}
	})
	t.Run("cancel during wait", func(t *testing.T) {
		s := &scripted{steps: []http.HandlerFunc{status(503, nil, overloaded)}}
		srv := httptest.NewServer(s)
		defer srv.Close()
		c, _ := newTestClient(t, srv.URL, false)
		c.policy.sleep = sleepCtx
		c.policy.baseDelay, c.policy.maxDelay = time.Hour, time.Hour
		ctx, cancel := context.WithCancel(context.Background())
		c.policy.onRetry = func(Retry) { cancel() }
		_, err := c.Complete(ctx, Request{Agent: "a", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestRetryCarriesItsCause: OnRetry is told the cause as a class, with the
// HTTP status where there was one, so nobody reads it back out of the text.
func TestRetryCarriesItsCause(t *testing.T) {
	dropped := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", chunkJSON(t, openai.ChatCompletionStreamChoiceDelta{Content: "half"}, ""))
		w.(http.Flusher).Flush()
		panic(http.ErrAbortHandler)
	}
	cases := []struct {
		name   string
		first  http.HandlerFunc
		stream bool
		cause  RetryCause
		status int
	}{
		{"429", status(429, nil, `{"error":{"message":"slow down"}}`), false, RetryRateLimit, 429},
		{"502", status(502, nil, `{"error":{"message":"bad gateway"}}`), false, RetryServerError, 502},
		{"stream broke off", dropped, true, RetryConnection, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ok := func(w http.ResponseWriter, r *http.Request) { status(200, nil, okJSON)(w, r) }
			if c.stream {
				ok = func(w http.ResponseWriter, r *http.Request) {
					sse(w, chunkJSON(t, openai.ChatCompletionStreamChoiceDelta{Content: "done"}, "stop"))
				}
			}
			srv := httptest.NewServer(&scripted{steps: []http.HandlerFunc{c.first, ok}})
			defer srv.Close()
			cl, log := newTestClient(t, srv.URL, c.stream)
			if _, err := ask(cl, nil); err != nil {
				t.Fatal(err)
			}
			if len(log.all) != 1 {
				t.Fatalf("%d retries, want 1", len(log.all))
			}
			r := log.all[0]
			if r.Agent != "alice" || r.Attempt != 1 || r.Cause != c.cause || r.Status != c.status || r.Err == nil {
				t.Errorf("retry %+v, want cause %s status %d", r, c.cause, c.status)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String()
		ln.Close()
		cl, log := newTestClient(t, url, false)
		_, _ = ask(cl, nil)
		if len(log.all) == 0 || log.all[0].Cause != RetryConnection || log.all[0].Status != 0 {
			t.Errorf("retries %+v, want connection", log.all)
		}
	})
}

func TestCompleteErrors(t *testing.T) {
	tests := []struct {
		name    string
		stream  bool
		handler http.HandlerFunc
		is      error
		says    []string
	}{
		{"401", false, status(401, nil, `{"error":{"message":"Incorrect API key","code":"invalid_api_key"}}`), ErrAuth,
			[]string{"HTTP 401", "OPENAI_API_KEY"}},
		{"403 html", true, status(403, map[string]string{"Content-Type": "text/html"}, "<html>denied</html>"), ErrAuth,
			[]string{"HTTP 403", "OPENAI_API_KEY"}},
		{"html 200", false, status(200, map[string]string{"Content-Type": "text/html; charset=utf-8"}, "<!doctype html><p>login"), nil,
			[]string{"HTTP 200", "text/html", "base-url"}},
		{"html 200 stream", true, status(200, map[string]string{"Content-Type": "text/html"}, "<html>"), nil,
			[]string{"HTTP 200", "text/html"}},
		{"plain 404", false, status(404, map[string]string{"Content-Type": "text/plain"}, "404 page not found"), nil,
			[]string{"HTTP 404", "text/plain"}},
		{"context length code", false, status(400, nil,
			`{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}`), ErrContextLength, nil},
		{"context length message", true, status(400, nil,
			`{"error":{"message":"This model's maximum context length is 8192 tokens"}}`), ErrContextLength, nil},
		{"other 400", false, status(400, nil, `{"error":{"message":"bad tool schema"}}`), nil,
			[]string{"HTTP 400", "bad tool schema"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, log := oneServer(t, tt.stream, tt.handler)
			_, err := ask(c, nil)
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err %v is not %v", err, tt.is)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err %q does not say %q", err, s)
				}
			}
			if strings.Contains(err.Error(), "sk-test") {
				t.Errorf("err leaks the key: %v", err)
			}
			if s.calls() != 1 || log.count() != 0 {
				t.Errorf("requests %d retries %d, want no retry", s.calls(), log.count())
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"2", 2 * time.Second}, {"0.5", 500 * time.Millisecond}, {"-1", 0}, {"soon", 0},
		{now.Add(30 * time.Second).Format(http.TimeFormat), 30 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestBackoffBounds(t *testing.T) {
	p := &retryPolicy{baseDelay: 10 * time.Millisecond, maxDelay: 50 * time.Millisecond}
	for attempt, ceiling := range map[int]time.Duration{1: 10 * time.Millisecond, 2: 20 * time.Millisecond, 3: 40 * time.Millisecond, 10: 50 * time.Millisecond} {
		for range 200 {
			if d := p.backoff(attempt); d < 0 || d > ceiling {
				t.Fatalf("backoff(%d) = %v, want within [0, %v]", attempt, d, ceiling)
			}
		}
	}
}
