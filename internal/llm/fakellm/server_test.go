package fakellm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestNonStreamingReply(t *testing.T) {
	s := New(Always(Reply{Content: "sure", ToolCalls: []ToolCall{{Name: "bash", Args: `{"command":"ls"}`}}}))
	defer s.Close()
	resp, err := client(s, "alice", "").CreateChatCompletion(context.Background(), request("hi"))
	if err != nil {
		t.Fatal(err)
	}
	msg := resp.Choices[0].Message
	if msg.Content != "sure" || len(msg.ToolCalls) != 1 || msg.ToolCalls[0].ID == "" || msg.ToolCalls[0].Function.Name != "bash" {
		t.Fatalf("message %+v", msg)
	}
	if resp.Usage.PromptTokens == 0 || resp.Usage.TotalTokens != resp.Usage.PromptTokens+resp.Usage.CompletionTokens {
		t.Fatalf("usage not estimated: %+v", resp.Usage)
	}
	calls := s.Calls()
	if len(calls) != 1 || calls[0].Agent != "alice" || calls[0].Stream || calls[0].N != 0 {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestQueuePerAgentThenFallback(t *testing.T) {
	script := Queue(map[string][]Reply{
		"lead":  {{Content: "l0"}, {Content: "l1"}},
		"alice": {{Content: "a0"}},
	}, func(c Call) Reply { return Reply{Content: fmt.Sprintf("fallback %s %d", c.Agent, c.N)} })
	s := New(script)
	defer s.Close()
	ask := func(agent string) string {
		resp, err := client(s, agent, "").CreateChatCompletion(context.Background(), request("x"))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Choices[0].Message.Content
	}
	got := []string{ask("lead"), ask("alice"), ask("lead"), ask("alice"), ask("lead"), ask("bob")}
	want := []string{"l0", "a0", "l1", "fallback alice 1", "fallback lead 2", "fallback bob 0"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if s.CallsFor("lead") != 3 || s.CallsFor("alice") != 2 || len(s.Requests("bob")) != 1 {
		t.Fatalf("counts lead=%d alice=%d", s.CallsFor("lead"), s.CallsFor("alice"))
	}

	empty := New(Queue(nil, nil))
	defer empty.Close()
	resp, err := client(empty, "zed", "").CreateChatCompletion(context.Background(), request("x"))
	if err != nil || !strings.Contains(resp.Choices[0].Message.Content, "no scripted reply") {
		t.Fatalf("exhausted queue: %v %+v", err, resp)
	}
}

func TestRateLimitWithRetryAfter(t *testing.T) {
	s := New(Always(Reply{Status: 429, RetryAfter: "2", Content: "Rate limit reached"}))
	defer s.Close()
	_, err := client(s, "lead", "").CreateChatCompletion(context.Background(), request("x"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Type != "rate_limit_error" ||
		apiErr.Code != "rate_limit_exceeded" || apiErr.Message != "Rate limit reached" {
		t.Fatalf("got %#v", err)
	}
	// go-openai hides headers on errors; check Retry-After on the wire.
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}]}`))
	req.Header.Set(AgentHeader, "lead")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "2" {
		t.Fatalf("status %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}

func TestServerErrorAndHTMLBody(t *testing.T) {
	s := New(Queue(map[string][]Reply{"lead": {
		{Status: 500},
		{Status: 502, Body: "<html><body>Bad Gateway</body></html>"},
		{Status: 503, Body: "<html>busy</html>"},
	}}, nil))
	defer s.Close()
	c := client(s, "lead", "")
	_, err := c.CreateChatCompletion(context.Background(), request("x"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 500 || apiErr.Type != "server_error" {
		t.Fatalf("500: %#v", err)
	}
	_, err = c.CreateChatCompletion(context.Background(), request("x"))
	var reqErr *openai.RequestError
	if !errors.As(err, &reqErr) || reqErr.HTTPStatusCode != 502 || !strings.Contains(string(reqErr.Body), "Bad Gateway") {
		t.Fatalf("HTML 502: %#v", err)
	}
	_, err = c.CreateChatCompletionStream(context.Background(), request("x"))
	if !errors.As(err, &reqErr) || reqErr.HTTPStatusCode != 503 {
		t.Fatalf("HTML 503 on a stream: %#v", err)
	}
}

func TestAPIKey(t *testing.T) {
	s := New(Always(Reply{Content: "ok"}), WithAPIKey("sk-right"))
	defer s.Close()
	_, err := client(s, "lead", "sk-wrong").CreateChatCompletion(context.Background(), request("x"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 {
		t.Fatalf("wrong key: %#v", err)
	}
	if _, err := client(s, "lead", "sk-right").CreateChatCompletion(context.Background(), request("x")); err != nil {
		t.Fatalf("right key: %v", err)
	}
	if s.CallsFor("lead") != 1 {
		t.Fatalf("an unauthorized request reached the script: %d calls", s.CallsFor("lead"))
	}
}

func TestViolationsAreRefusedAndRecorded(t *testing.T) {
	s := New(Always(Reply{Content: "ok"}))
	defer s.Close()
	bad := request("hi")
	bad.Messages = append(bad.Messages, openai.ChatCompletionMessage{Role: "tool", ToolCallID: "c1", Content: "x"})
	_, err := client(s, "alice", "").CreateChatCompletion(context.Background(), bad)
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 400 || !strings.Contains(apiErr.Message, "role 'tool'") {
		t.Fatalf("bad conversation: %#v", err)
	}
	undeclared := request("hi")
	undeclared.Messages = append(undeclared.Messages,
		openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function",
			Function: openai.FunctionCall{Name: "spawn_teammate", Arguments: "{}"}}}},
		openai.ChatCompletionMessage{Role: "tool", ToolCallID: "c1", Content: "done"})
	// A model may call a tool that does not exist; the answered conversation is valid.
	if _, err := client(s, "alice", "").CreateChatCompletion(context.Background(), undeclared); err != nil {
		t.Fatalf("an answered call to an unknown tool was refused: %v", err)
	}
	anon := openai.DefaultConfig("")
	anon.BaseURL = s.URL()
	if _, err := openai.NewClientWithConfig(anon).CreateChatCompletion(context.Background(), request("hi")); err == nil {
		t.Fatal("a request without the agent header was accepted")
	}

	v := s.Violations()
	if len(v) != 2 || !contains(v, "alice: messages[2]") || !contains(v, "missing X-Agentteam-Agent") {
		t.Fatalf("violations %q", v)
	}
	if len(s.Calls()) != 1 {
		t.Fatalf("want only the valid request to reach the script, got %+v", s.Calls())
	}

	d := New(Always(Reply{Content: "ok"}), WithDefaultAgent("lead"))
	defer d.Close()
	anon.BaseURL = d.URL()
	if _, err := openai.NewClientWithConfig(anon).CreateChatCompletion(context.Background(), request("hi")); err != nil || d.CallsFor("lead") != 1 {
		t.Fatalf("default agent: %v, %d calls", err, d.CallsFor("lead"))
	}
}

func TestDelayAnswers(t *testing.T) {
	s := New(Always(Reply{Content: "late", Delay: 20 * time.Millisecond}))
	defer s.Close()
	resp, err := client(s, "lead", "").CreateChatCompletion(context.Background(), request("x"))
	if err != nil || resp.Choices[0].Message.Content != "late" {
		t.Fatalf("%v %+v", err, resp)
	}
}

func TestDelayHonoursCancellation(t *testing.T) {
	arrived := make(chan struct{})
	s := New(func(Call) Reply {
		close(arrived)
		return Reply{Content: "never", Delay: time.Hour}
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := client(s, "lead", "").CreateChatCompletion(ctx, request("x"))
		errc <- err
	}()
	<-arrived
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	s.Close() // waits for the handler: hangs for an hour if the delay ignored the request's end
	if n := s.InFlight(); n != 0 {
		t.Fatalf("in flight after close: %d", n)
	}
}

func TestCloseEndsPendingDelays(t *testing.T) {
	arrived := make(chan struct{})
	s := New(func(Call) Reply {
		close(arrived)
		return Reply{Content: "never", Delay: time.Hour}
	})
	errc := make(chan error, 1)
	go func() {
		_, err := client(s, "lead", "").CreateChatCompletion(context.Background(), request("x"))
		errc <- err
	}()
	<-arrived
	s.Close()
	if err := <-errc; err == nil {
		t.Fatal("a request cut by Close succeeded")
	}
}

func TestMaxInFlightCountsConcurrentRequests(t *testing.T) {
	const perAgent = 3
	agents := []string{"lead", "alice", "bob"}
	arrived := make(chan string)
	release := make(chan struct{})
	s := New(func(c Call) Reply {
		arrived <- c.Agent
		<-release
		return Reply{Content: "done " + c.Agent}
	})
	defer s.Close()
	var wg sync.WaitGroup
	errs := make(chan error, perAgent*len(agents))
	for _, a := range agents {
		for range perAgent {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client(s, a, "").CreateChatCompletion(context.Background(), request("x"))
				if err == nil && resp.Choices[0].Message.Content != "done "+a {
					err = fmt.Errorf("%s got %q", a, resp.Choices[0].Message.Content)
				}
				errs <- err
			}()
		}
	}
	for range perAgent * len(agents) {
		<-arrived
	}
	if n := s.InFlight(); n != perAgent*len(agents) {
		t.Fatalf("InFlight = %d with every request held", n)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := s.MaxInFlight(nil); got != 9 {
		t.Fatalf("MaxInFlight(all) = %d, want 9", got)
	}
	teammates := func(a string) bool { return a != "lead" }
	if got := s.MaxInFlight(teammates); got != 6 {
		t.Fatalf("MaxInFlight(teammates) = %d, want 6", got)
	}
	if got := s.MaxInFlight(func(a string) bool { return a == "alice" }); got != 3 {
		t.Fatalf("MaxInFlight(alice) = %d, want 3", got)
	}
}

func TestSequentialRequestsPeakAtOne(t *testing.T) {
	s := New(Always(Reply{Content: "ok"}))
	defer s.Close()
	for range 3 {
		if _, err := client(s, "lead", "").CreateChatCompletion(context.Background(), request("x")); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.MaxInFlight(nil); got != 1 {
		t.Fatalf("MaxInFlight = %d for sequential requests", got)
	}
}

// Many clients at once: every agent's call indexes must be exactly 0..n-1.
func TestConcurrentRecordingIsConsistent(t *testing.T) {
	const n = 15
	agents := []string{"lead", "a", "b", "c"}
	s := New(func(c Call) Reply { return Reply{Content: fmt.Sprint(c.N)} })
	defer s.Close()
	var wg sync.WaitGroup
	for _, a := range agents {
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				stream, err := client(s, a, "").CreateChatCompletionStream(context.Background(), request("x"))
				if err != nil {
					t.Error(err)
					return
				}
				defer stream.Close()
				for {
					if _, err := stream.Recv(); err != nil {
						if !errors.Is(err, io.EOF) {
							t.Error(err)
						}
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, a := range agents {
		var ns []int
		for _, c := range s.Calls() {
			if c.Agent == a {
				ns = append(ns, c.N)
			}
		}
		slices.Sort(ns)
		for i, v := range ns {
			if v != i {
				t.Fatalf("agent %s call indexes %v", a, ns)
			}
		}
		if len(ns) != n || s.CallsFor(a) != n || len(s.Requests(a)) != n {
			t.Fatalf("agent %s: %d calls, CallsFor %d", a, len(ns), s.CallsFor(a))
		}
	}
	if s.InFlight() != 0 {
		t.Fatalf("in flight after all done: %d", s.InFlight())
	}
}
