package fakellm

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// raw posts a request and returns the answer's status and bytes, read until
// the server ends it or wait passes (for answers that never end).
func raw(t *testing.T, s *Server, body string, wait time.Duration) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(AgentHeader, "lead")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out strings.Builder
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out.WriteString(sc.Text() + "\n")
	}
	return resp.StatusCode, out.String()
}

const (
	plain    = `{"model":"m","messages":[{"role":"user","content":"go"}]}`
	streamed = `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`
	withOpts = `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}]}`
)

func TestPlaybacksShapeTheBytes(t *testing.T) {
	two := []ToolCall{{ID: "c1", Name: "spawn_teammate", Args: `{"name":"bob"}`}, {ID: "c2", Name: "write_file", Args: `{"path":"a"}`}}
	tests := []struct {
		name    string
		reply   Reply
		body    string
		want    []string // fragments of the answer
		notWant []string
	}{
		{"no ids, whole calls, no index", Reply{ToolCalls: two, NoIDs: true, WholeCalls: true, NoIndex: true}, streamed,
			[]string{`"tool_calls":[{"type":"function","function":{"name":"spawn_teammate","arguments":"{\"name\":\"bob\"}"}}]`}, []string{`"index":0,"id"`, `"id":"c1"`}},
		{"arguments as an object", Reply{ToolCalls: two[:1], ArgsAsObject: true}, plain,
			[]string{`"arguments":{"name":"bob"}`}, nil},
		{"arguments as an object, streamed", Reply{ToolCalls: two[:1], ArgsAsObject: true}, streamed,
			[]string{`"arguments":{"name":"bob"}`}, nil},
		{"DeepSeek reasoning", Reply{Content: "hi", Reasoning: "think"}, streamed, []string{`"reasoning_content":"think"`}, nil},
		{"reasoning field", Reply{Content: "hi", Reasoning: "think", ReasoningField: "reasoning"}, plain, []string{`"reasoning":"think"`}, nil},
		{"Groq usage", Reply{Content: "hi", UsageInXGroq: true}, streamed, []string{`"x_groq":{"id":`, `"total_tokens"`}, []string{`"choices":[],"usage"`}},
		{"output limit", Reply{ToolCalls: two[:1], FinishLength: true}, plain, []string{`"arguments":"{\"name`, `"finish_reason":"length"`}, []string{`bob`}},
		{"keep-alives", Reply{Content: "hi", KeepAlives: 3}, streamed, []string{": OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\ndata: "}, nil},
		{"no finish", Reply{Content: "hi", ToolCalls: two[:1], NoFinish: true}, streamed, []string{`ob\"}`}, []string{`finish_reason":"`, "[DONE]"}},
		{"in-band error", Reply{Content: "partial", InBandError: "Provider returned error"}, streamed,
			[]string{`"error":{"code":502,"message":"Provider returned error"}`, `"finish_reason":"error"`, "[DONE]"}, nil},
		{"empty when streamed", Reply{ToolCalls: two, EmptyWhenStreamed: true}, streamed, []string{`"finish_reason":"stop"`}, []string{"spawn"}},
		{"whole when not streamed", Reply{ToolCalls: two, EmptyWhenStreamed: true}, plain, []string{"spawn_teammate", "write_file"}, nil},
		{"Gemini signs the first call", Reply{ToolCalls: two, ThoughtSignatures: true}, streamed,
			[]string{`"extra_content":{"google":{"thought_signature":"sig-lead-0"}}`}, []string{`"id":"c2","type":"function","function":{"name":"write_file","arguments":""},"extra_content"`}},
		{"tool calls as text", Reply{Content: "On it.", ToolCalls: two[:1], ToolCallsAsText: true}, plain,
			[]string{`"content":"On it.\n\u003ctool_call\u003e\n{\"name\":\"spawn_teammate\",\"arguments\":{\"name\":\"bob\"}}\n\u003c/tool_call\u003e"`}, []string{`"tool_calls"`}},
		{"OpenAI error in a 200", OpenAIError200("model overloaded"), streamed, []string{`{"error":{"code":null,"message":"model overloaded"`}, nil},
		{"vLLM error in a 200", VLLMError200("bad"), streamed, []string{`"object":"error"`, `"message":"bad"`}, nil},
		{"TGI error in a 200", TGIError200("Input validation error"), streamed, []string{`{"error":"Input validation error","error_type":"validation"}`}, nil},
		{"Azure's filters, streamed", Reply{Content: "hi", AzureFilters: true}, streamed, []string{
			"data: {\"id\":\"\",\"object\":\"\",\"created\":0,\"model\":\"\",\"prompt_filter_results\":[{\"prompt_index\":0,",
			`"delta":{"content":"hi"},"finish_reason":null,"content_filter_results":{"hate":{"filtered":false`,
			`"choices":[{"index":0,"finish_reason":null,"content_filter_results":`, `"content_filter_offsets":{"check_offset":2`}, nil},
		{"Azure's filters, whole", Reply{Content: "hi", AzureFilters: true}, plain,
			[]string{`"prompt_filter_results":[{"prompt_index":0`, `"finish_reason":"stop","content_filter_results":{`}, nil},
		{"Azure's filter stops the reply", Reply{Content: "0123456789", ContentFiltered: true}, streamed,
			[]string{`"content":"01234"`, `"finish_reason":"content_filter","content_filter_results":{`, `"violence":{"filtered":true`}, []string{"56789"}},
		{"LM Studio's error event", LMStudioStreamError("Error rendering prompt"), streamed,
			[]string{"event: error\ndata: {\"error\":{\"message\":\"Error rendering prompt\"}}\n"}, nil},
		{"LiteLLM's error line mid-stream", LiteLLMMidStreamError("so far", 500, "InternalServerError", "upstream gone"), streamed,
			[]string{`"delta":{"content":"so far"}`, `data: {"error":{"code":"500","message":"litellm.InternalServerError: upstream gone","param":null,"type":null}}`},
			[]string{"[DONE]", `"finish_reason":"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Always(tt.reply))
			defer s.Close()
			code, out := raw(t, s, tt.body, 10*time.Second)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("answer lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("answer has %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestAzureDeploymentURL: only the deployment's path with its api-version,
// and the key in api-key, are answered, with Azure's own error shapes.
func TestAzureDeploymentURL(t *testing.T) {
	s := New(Always(Reply{Content: "hi"}), AzureDeployment("dep", "2024-10-21"), WithAPIKey("k"))
	defer s.Close()
	if !strings.HasSuffix(s.URL(), "/openai/deployments/dep") {
		t.Fatalf("URL %s", s.URL())
	}
	post := func(url string, header map[string]string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(plain))
		req.Header.Set(AgentHeader, "lead")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			b.WriteString(sc.Text())
		}
		return resp.StatusCode, b.String()
	}
	chat := s.URL() + "/chat/completions"
	for _, c := range []struct {
		url    string
		header map[string]string
		status int
		says   string
	}{
		{chat, map[string]string{"api-key": "k"}, 404, `"message":"Resource not found"`},
		{chat + "?api-version=2023-05-15", map[string]string{"api-key": "k"}, 404, "Resource not found"},
		{chat + "?api-version=2024-10-21", map[string]string{"Authorization": "Bearer k"}, 401, "Access denied due to invalid subscription key"},
		{chat + "?api-version=2024-10-21", map[string]string{"api-key": "k"}, 200, `"content":"hi"`},
	} {
		if status, body := post(c.url, c.header); status != c.status || !strings.Contains(body, c.says) {
			t.Errorf("%s %v: %d %s; want %d with %q", c.url, c.header, status, body, c.status, c.says)
		}
	}
	if calls := s.Calls(); len(calls) != 1 || calls[0].Header.Get("api-key") != "k" {
		t.Errorf("calls %+v", calls)
	}
}

func TestNoDoneAndStallKeepTheConnectionOpen(t *testing.T) {
	for _, r := range []Reply{{Content: "hello", NoDone: true}, {Content: "hello there", StallAfter: 2}} {
		s := New(Always(r))
		start := time.Now()
		_, out := raw(t, s, withOpts, 300*time.Millisecond)
		if time.Since(start) < 250*time.Millisecond || strings.Contains(out, "[DONE]") {
			t.Fatalf("%+v: the answer ended: %q", r, out)
		}
		if r.NoDone && (!strings.Contains(out, `"finish_reason":"stop"`) || !strings.Contains(out, `"total_tokens"`)) {
			t.Fatalf("no [DONE]: the finish and usage chunks were held back: %q", out)
		}
		if r.StallAfter > 0 && strings.Count(out, "data: ") != 2 {
			t.Fatalf("stall after 2: %q", out)
		}
		s.Close() // must not wait for the answer that never ends
	}
}

func TestServerWideRefusals(t *testing.T) {
	t.Run("Groq refuses stream_options", func(t *testing.T) {
		s := New(Always(Reply{Content: "ok"}), RefuseStreamOptions(Groq))
		defer s.Close()
		code, out := raw(t, s, withOpts, 5*time.Second)
		if code != 400 || !strings.Contains(out, "property 'stream_options' is unsupported") {
			t.Fatalf("%d %s", code, out)
		}
		if code, _ := raw(t, s, streamed, 5*time.Second); code != 200 {
			t.Fatalf("without stream_options: %d", code)
		}
	})
	t.Run("Mistral refuses stream_options", func(t *testing.T) {
		s := New(Always(Reply{Content: "ok"}), RefuseStreamOptions(Mistral))
		defer s.Close()
		code, out := raw(t, s, withOpts, 5*time.Second)
		if code != 422 || !strings.Contains(out, `"extra_forbidden"`) || !strings.Contains(out, `"loc":["body","stream_options"]`) {
			t.Fatalf("%d %s", code, out)
		}
	})
	t.Run("nine-character ids", func(t *testing.T) {
		s := New(Always(Reply{Content: "ok"}), RequireNineCharCallIDs())
		defer s.Close()
		conv := func(id string) string {
			return `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"` + id +
				`","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"` + id + `","content":"ok"}]}`
		}
		code, out := raw(t, s, conv("call_1"), 5*time.Second)
		if code != 400 || !strings.Contains(out, "Tool call id was call_1 but must be a-z, A-Z, 0-9, with a length of 9.") {
			t.Fatalf("%d %s", code, out)
		}
		if code, out := raw(t, s, conv("aB3dE6gH9"), 5*time.Second); code != 200 {
			t.Fatalf("a good id refused: %d %s", code, out)
		}
	})
	t.Run("Gemini wants its signatures back", func(t *testing.T) {
		s := New(Always(Reply{Content: "ok"}), RequireThoughtSignatures())
		defer s.Close()
		conv := func(sig string) string {
			return `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}` +
				sig + `}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`
		}
		code, out := raw(t, s, conv(""), 5*time.Second)
		if code != 400 || !strings.HasPrefix(out, `[{"error":{"code":400,"message":"Function call is missing a thought_signature`) {
			t.Fatalf("%d %s", code, out)
		}
		if code, _ := raw(t, s, conv(`,"extra_content":{"google":{"thought_signature":"forged"}}`), 5*time.Second); code != 400 {
			t.Fatalf("a signature never given was accepted: %d", code)
		}
		if code, out := raw(t, s, conv(`,"extra_content":{"google":{"thought_signature":"`+SkipThoughtSignature+`"}}`), 5*time.Second); code != 200 {
			t.Fatalf("the sentinel was refused: %d %s", code, out)
		}
	})
	t.Run("DeepSeek wants reasoning_content back", func(t *testing.T) {
		s := New(Always(Reply{Content: "ok"}), RequireReasoningContent())
		defer s.Close()
		conv := func(reasoning string) string {
			return `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"assistant","reasoning_content":"` + reasoning +
				`","tool_calls":[{"id":"c1","type":"function","function":{"name":"bash","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"ok"}]}`
		}
		code, out := raw(t, s, conv(""), 5*time.Second)
		if code != 400 || !strings.Contains(out, "Missing `reasoning_content` field in the assistant message at message index 1") {
			t.Fatalf("%d %s", code, out)
		}
		if code, _ := raw(t, s, conv("because"), 5*time.Second); code != 200 {
			t.Fatalf("with reasoning_content: %d", code)
		}
		if n := s.CallsFor("lead"); n != 2 {
			t.Fatalf("refused requests are counted too: %d calls, want 2", n)
		}
	})
}

func TestErrorPlaybacksAreTheServersShapes(t *testing.T) {
	for name, r := range map[string]Reply{
		"llama.cpp": LlamaCppContextError(),
		"gemini":    GeminiErrorArray(400, "Function call is missing a thought_signature"),
	} {
		s := New(Always(r))
		code, out := raw(t, s, plain, 5*time.Second)
		s.Close()
		var v any
		if code != 400 || json.Unmarshal([]byte(out), &v) != nil {
			t.Fatalf("%s: %d %q", name, code, out)
		}
	}
}
