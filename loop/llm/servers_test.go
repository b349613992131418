package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// Issue 8: what real servers send, at the level of the client.

// rawSSE answers with the given lines as they are, then ends the answer.
func rawSSE(lines ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, l := range lines {
			fmt.Fprint(w, l)
			w.(http.Flusher).Flush()
		}
	}
}

func data(s string) string { return "data: " + s + "\n\n" }

const (
	finishStop  = `{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	contentDone = `{"id":"x","choices":[{"index":0,"delta":{"content":"done"}}]}`
)

func TestClientReadsWhatServersSend(t *testing.T) {
	wholeCall := func(index, id, name, args string) string {
		tc := `{` + index + id + `"type":"function","function":{"name":"` + name + `","arguments":` + args + `}}`
		return data(`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[` + tc + `]}}]}`)
	}
	tests := []struct {
		name    string
		stream  bool
		handler http.HandlerFunc
		calls   []string // "name args", in order
		content string
		tokens  int
	}{
		{"whole calls without index or id", true, rawSSE(
			wholeCall("", "", "spawn_teammate", `"{\"name\":\"bob\"}"`),
			wholeCall("", "", "write_file", `"{\"path\":\"a\"}"`),
			data(`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`), data("[DONE]")),
			[]string{`spawn_teammate {"name":"bob"}`, `write_file {"path":"a"}`}, "", 0},
		{"whole calls all at index 0", true, rawSSE(
			wholeCall(`"index":0,`, "", "write_file", `"{\"path\":\"a\"}"`),
			wholeCall(`"index":0,`, "", "write_file", `"{\"path\":\"b\"}"`),
			data(`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`), data("[DONE]")),
			[]string{`write_file {"path":"a"}`, `write_file {"path":"b"}`}, "", 0},
		{"name resent with every piece", true, rawSSE(
			wholeCall(`"index":0,`, "", "bash", `"{\"comm"`),
			wholeCall(`"index":0,`, "", "bash", `"and\":\"ls\"}"`),
			data(finishStop), data("[DONE]")),
			[]string{`bash {"command":"ls"}`}, "", 0},
		{"arguments as an object, streamed", true, rawSSE(
			wholeCall(`"index":0,`, `"id":"c1",`, "bash", `{"command": "ls"}`),
			data(finishStop), data("[DONE]")),
			[]string{`bash {"command": "ls"}`}, "", 0},
		{"arguments as an object, whole", false, status(200, nil,
			`{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":{"command":"ls"}}}]}}]}`),
			[]string{`bash {"command":"ls"}`}, "", 0},
		{"keep-alives do not count", true, rawSSE(strings.Repeat(": OPENROUTER PROCESSING\n\n", 1000), data(contentDone), data(finishStop), data("[DONE]")),
			nil, "done", 0},
		{"usage only in x_groq", true, rawSSE(data(contentDone), data(finishStop),
			data(`{"id":"x","choices":[],"x_groq":{"id":"req_1","usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}}`), data("[DONE]")),
			nil, "done", 7},
		{"usage only in x_groq, whole", false, status(200, nil,
			`{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"done"}}],"x_groq":{"usage":{"total_tokens":9}}}`),
			nil, "done", 9},
		{"lines end in CRLF, events named", true, rawSSE("event: message\r\n"+"data: "+contentDone+"\r\n\r\n", "data: "+finishStop+"\r\n\r\n", "data: [DONE]\r\n\r\n"),
			nil, "done", 0},
		{"a server that ignores stream", true, status(200, nil, okJSON), nil, "done", 0},
		// The SSE spec joins an event's data: lines with "\n": JSON printed over several lines.
		{"one event in several data lines", true, rawSSE(
			"data: {\"id\":\"x\",\ndata: \"choices\":[{\"index\":0,\"delta\":{\"content\":\"do\"}}]}\n\n",
			"data: {\ndata:   \"id\": \"x\",\ndata:   \"choices\": [{\"index\": 0, \"delta\": {\"content\": \"ne\"},\n",
			"data:     \"finish_reason\": \"stop\"}]\r\ndata: }\r\n\r\n", data("[DONE]")),
			nil, "done", 0},
		{"a call's arguments in an event of several lines", true, rawSSE(
			"data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[\ndata: {\"index\":0,\"id\":\"c1\",\"type\":\"function\",\ndata: \"function\":{\"name\":\"bash\",\"arguments\":\"{\\\"command\\\":\\\"ls\\\"}\"}}]}}]}\n\n",
			data(`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`), data("[DONE]")),
			[]string{`bash {"command":"ls"}`}, "", 0},
		{"no blank line between events", true, rawSSE("data: "+contentDone+"\n", "data: "+finishStop+"\n", "data: [DONE]\n"),
			nil, "done", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, log := oneServer(t, tt.stream, tt.handler)
			resp, err := ask(c, nil)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tc := range resp.Message.ToolCalls {
				got = append(got, tc.Function.Name+" "+tc.Function.Arguments)
				if !madeID.MatchString(tc.ID) && tc.ID != "c1" {
					t.Errorf("id %q", tc.ID)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.calls) {
				t.Errorf("calls %q, want %q", got, tt.calls)
			}
			if resp.Message.Content != tt.content || resp.Usage.TotalTokens != tt.tokens {
				t.Errorf("content %q tokens %d", resp.Message.Content, resp.Usage.TotalTokens)
			}
			if s.calls() != 1 || log.count() != 0 {
				t.Errorf("requests %d retries %d", s.calls(), log.count())
			}
		})
	}
}

func TestClientFailsClearlyOnErrorsThatRepeat(t *testing.T) {
	tests := []struct {
		name    string
		stream  bool
		handler http.HandlerFunc
		says    string
		is      error
	}{
		{"openai error in a 200 stream", true, status(200, nil, `{"error":{"message":"overloaded model","type":"server_error"}}`), "overloaded model", nil},
		{"vllm error in a 200", false, status(200, nil, `{"object":"error","message":"bad tools","type":"BadRequestError","param":null,"code":400}`), "bad tools", nil},
		{"tgi error in a 200 stream", true, status(200, nil, `{"error":"Input validation error","error_type":"validation"}`), "Input validation error", nil},
		{"error body in an event stream", true, rawSSE(`{"error":{"message":"quota exceeded"}}`), "quota exceeded", nil},
		{"event: error", true, rawSSE("event: error\ndata: {\"message\":\"boom\",\"object\":\"error\"}\n\n"), "boom", nil},
		{"event: error over several data lines", true, rawSSE("event: error\ndata: {\"message\":\ndata: \"boom\",\ndata: \"object\":\"error\"}\n\n"), "boom", nil},
		{"in-band error", true, rawSSE(data(contentDone),
			data(`{"id":"x","error":{"code":400,"message":"Provider returned error"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`), data("[DONE]")),
			"Provider returned error", nil},
		{"finish_reason error alone", true, rawSSE(data(contentDone), data(`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"error"}]}`)),
			`finish_reason "error"`, nil},
		{"unreadable chunk", true, rawSSE(data(`{"choices":[{"index":0,"delta":{"content":[1]}}]}`)), "could not be read", nil},
		{"not json at all", false, status(200, nil, `{"choices":`), "could not be read", nil},
		{"gemini's error array", false, status(400, nil, `[{"error":{"code":400,"message":"Request contains an invalid argument.","status":"INVALID_ARGUMENT"}}]`),
			"Request contains an invalid argument.", nil},
		{"mistral's detail", false, status(422, nil, `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","messages",1,"assistant","reasoning_content"],"msg":"Extra inputs are not permitted"}]},"type":"invalid_request_error"}`),
			"messages.1.assistant.reasoning_content: Extra inputs are not permitted (extra_forbidden)", nil},
		{"llama.cpp context size", false, status(400, nil, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}}`),
			"available context size", ErrContextLength},
		{"older llama.cpp context size as a 500", true, status(500, nil, `{"error":{"code":500,"message":"the request exceeds the available context size. try increasing the context size or enable context shift","type":"exceed_context_size_error","n_prompt_tokens":1407,"n_ctx":256}}`),
			"available context size", ErrContextLength},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, c, log := oneServer(t, tt.stream, tt.handler)
			_, err := ask(c, nil)
			t.Log(err)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Fatalf("err %v, want it to say %q", err, tt.says)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err %v is not %v", err, tt.is)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("err is more than one line: %q", err)
			}
			if s.calls() != 1 || log.count() != 0 {
				t.Errorf("requests %d retries %d, want no retry", s.calls(), log.count())
			}
		})
	}
}

func TestClientRetriesWhatMayPass(t *testing.T) {
	half := rawSSE(data(`{"id":"x","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"rm -rf x\"}"}}]}}]}`))
	ok := rawSSE(data(contentDone), data(finishStop), data("[DONE]"))
	stall := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, data(contentDone))
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	inBand502 := rawSSE(data(contentDone), data(`{"id":"x","error":{"code":502,"message":"Provider returned error"},"choices":[{"index":0,"delta":{},"finish_reason":"error"}]}`))
	tests := []struct {
		name  string
		first http.HandlerFunc
		cause RetryCause
	}{
		{"no finish, no [DONE]: a drop, its call never returned", half, RetryConnection},
		{"a stall", stall, RetryTimeout},
		{"an in-band 502", inBand502, RetryServerError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &scripted{steps: []http.HandlerFunc{tt.first, ok}}
			srv := httptest.NewServer(s)
			defer srv.Close()
			c, log := newTestClient(t, srv.URL, true)
			c.idle = 200 * time.Millisecond
			resp, err := ask(c, nil)
			if err != nil || resp.Message.Content != "done" || len(resp.Message.ToolCalls) != 0 {
				t.Fatalf("resp %+v err %v", resp, err)
			}
			if log.count() != 1 || log.all[0].Cause != tt.cause {
				t.Errorf("retries %+v, want one of cause %s", log.all, tt.cause)
			}
		})
	}
	t.Run("an in-band 502 every time: giving up in the server's words", func(t *testing.T) {
		s := &scripted{steps: []http.HandlerFunc{inBand502}}
		srv := httptest.NewServer(s)
		defer srv.Close()
		c, _ := newTestClient(t, srv.URL, true)
		_, err := ask(c, nil)
		if err == nil || !strings.Contains(err.Error(), "giving up after 3 retries") || !strings.Contains(err.Error(), "Provider returned error") {
			t.Fatalf("err %v", err)
		}
		if s.calls() != 4 {
			t.Errorf("%d requests", s.calls())
		}
	})
}

// TestNoDoneEndsAtTheFinishChunk: a server that never sends [DONE] and keeps
// the connection open; the turn ends at the finish chunk and usage chunk.
func TestNoDoneEndsAtTheFinishChunk(t *testing.T) {
	for _, withUsage := range []bool{true, false} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, data(contentDone), data(finishStop))
			if withUsage {
				fmt.Fprint(w, data(usageChunk))
			}
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}))
		c, log := newTestClient(t, srv.URL, true)
		c.idle = time.Minute
		start := time.Now()
		resp, err := ask(c, nil)
		took := time.Since(start)
		srv.Close()
		if err != nil || resp.Message.Content != "done" || log.count() != 0 {
			t.Fatalf("resp %+v err %v retries %d", resp, err, log.count())
		}
		if withUsage && resp.Usage.TotalTokens != 10 {
			t.Errorf("usage %+v", resp.Usage)
		}
		if limit := c.usageGrace + c.doneGrace + time.Second; took > limit {
			t.Errorf("the turn took %s with usage %v", took, withUsage)
		}
	}
}

func TestStreamOptionsRefusedOnceForTheProvider(t *testing.T) {
	var sent []bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			StreamOptions *json.RawMessage `json:"stream_options"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		sent = append(sent, body.StreamOptions != nil)
		if body.StreamOptions != nil {
			status(400, nil, `{"error":{"message":"property 'stream_options' is unsupported","type":"invalid_request_error"}}`)(w, r)
			return
		}
		rawSSE(data(contentDone), data(finishStop), data("[DONE]"))(w, r)
	}))
	defer srv.Close()
	c, log := newTestClient(t, srv.URL, true)
	for range 2 {
		if resp, err := ask(c, nil); err != nil || resp.Message.Content != "done" {
			t.Fatalf("resp %+v err %v", resp, err)
		}
	}
	if fmt.Sprint(sent) != "[true false false]" || log.count() != 0 {
		t.Errorf("stream_options sent %v, retries %d", sent, log.count())
	}
}

func TestEmptyStreamedTurnIsAskedAgainUnstreamed(t *testing.T) {
	var streamed []bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		st := strings.Contains(string(b), `"stream":true`)
		streamed = append(streamed, st)
		if st {
			rawSSE(data(`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`), data(finishStop), data("[DONE]"))(w, r)
			return
		}
		status(200, nil, `{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]}}]}`)(w, r)
	}))
	defer srv.Close()
	c, _ := newTestClient(t, srv.URL, true)
	resp, err := ask(c, nil)
	if err != nil || len(resp.Message.ToolCalls) != 1 || fmt.Sprint(streamed) != "[true false]" {
		t.Fatalf("resp %+v err %v streamed %v", resp, err, streamed)
	}
}

// TestMaxOutputTokensAndHeadersAreSent: the limit goes as max_tokens, which
// every server knows, until a server refuses it for max_completion_tokens
// (OpenAI's reasoning models); the provider's headers go with every request.
func TestMaxOutputTokensAndHeadersAreSent(t *testing.T) {
	var sent []string
	var referer string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		referer = r.Header.Get("HTTP-Referer")
		var body struct {
			Max           int `json:"max_tokens"`
			MaxCompletion int `json:"max_completion_tokens"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		sent = append(sent, fmt.Sprintf("%d/%d", body.Max, body.MaxCompletion))
		if body.Max != 0 {
			status(400, nil, `{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}}`)(w, r)
			return
		}
		status(200, nil, okJSON)(w, r)
	}))
	defer srv.Close()
	c := NewClient(ClientConfig{BaseURL: srv.URL + "/v1", APIKey: "k", Model: "m", MaxOutputTokens: 64,
		Headers: map[string]string{"HTTP-Referer": "https://example.org"}})
	for range 2 {
		if _, err := c.Complete(context.Background(), Request{Agent: "a", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}); err != nil {
			t.Fatal(err)
		}
	}
	if fmt.Sprint(sent) != "[64/0 0/64 0/64]" || referer != "https://example.org" {
		t.Errorf("max_tokens/max_completion_tokens sent %v, HTTP-Referer %q", sent, referer)
	}
}

// The fake's playback of a server that prints each chunk's JSON over
// several data: lines: the reply comes whole, calls and usage included.
func TestClientReadsMultiLineEventsFromTheFake(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "reading \"a\"\n", MultiLineData: true,
		ToolCalls: []fakellm.ToolCall{{Name: "read_file", Args: `{"path":"a.txt"}`}, {Name: "bash", Args: `{"command":"ls -l"}`}}}))
	defer srv.Close()
	c, log := newTestClient(t, strings.TrimSuffix(srv.URL(), "/v1"), true)
	resp, err := ask(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	for _, tc := range resp.Message.ToolCalls {
		calls = append(calls, tc.Function.Name+" "+tc.Function.Arguments)
	}
	if resp.Message.Content != "reading \"a\"\n" || fmt.Sprint(calls) != `[read_file {"path":"a.txt"} bash {"command":"ls -l"}]` ||
		resp.Usage.TotalTokens == 0 || log.count() != 0 {
		t.Fatalf("content %q calls %q usage %+v retries %d", resp.Message.Content, calls, resp.Usage, log.count())
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
}
