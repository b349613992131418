package cmd

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
)

// Issue 8: agentteam against the bytes real OpenAI-compatible servers send,
// played back by fakellm, through the binary.

// spawnAndWrite is the turn of the example: two calls at once, a
// spawn and a file, which used to merge into one call named
// spawn_teammatewrite_file.
var spawnAndWrite = []fakellm.ToolCall{
	call("spawn_teammate", `{"name":"bob","role":"tester","prompt":"check a.txt"}`),
	call("write_file", `{"path":"a.txt","content":"from the lead"}`),
}

// leadScript: the lead's replies in order, then "all done"; teammates say they are done.
func leadScript(replies ...fakellm.Reply) fakellm.Script {
	return fakellm.Queue(map[string][]fakellm.Reply{"lead": replies}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" {
			return fakellm.Reply{Content: "all done"}
		}
		return fakellm.Reply{Content: c.Agent + ": done"}
	})
}

// worked checks a run that must complete: exit 0, the final answer on
// stdout, no protocol violation.
func worked(t *testing.T, r result, srv *fakellm.Server, final string) {
	t.Helper()
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if got := strings.TrimSpace(r.stdout); got != final {
		t.Fatalf("stdout %q, want %q\nstderr:\n%s", got, final, r.stderr)
	}
}

func fileIs(t *testing.T, ws, name, want string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(ws, name)); err != nil || string(b) != want {
		t.Errorf("%s: %q, %v; want %q", name, b, err, want)
	}
}

func noFile(t *testing.T, ws, name string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(ws, name)); !os.IsNotExist(err) {
		t.Errorf("%s exists: a tool call of a broken turn ran", name)
	}
}

// spawnedAndWrote: both calls of spawnAndWrite ran.
func spawnedAndWrote(t *testing.T, ws string) {
	t.Helper()
	fileIs(t, ws, "a.txt", "from the lead")
	if m := findMember(t, readRegistry(t, ws), "bob"); m.Role != "tester" {
		t.Errorf("bob's role %q", m.Role)
	}
}

func TestServersThatMustWork(t *testing.T) {
	cases := []struct {
		name  string
		opts  []fakellm.Option
		lead  []fakellm.Reply
		args  []string
		check func(t *testing.T, ws string, srv *fakellm.Server)
	}{
		{
			// Item 1: Groq refuses stream_options with a 400; asked once, then never again.
			name: "groq refuses stream_options", opts: []fakellm.Option{fakellm.RefuseStreamOptions(fakellm.Groq)},
			lead: []fakellm.Reply{{ToolCalls: spawnAndWrite}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) {
				spawnedAndWrote(t, ws)
				streamOptionsAskedOnce(t, srv)
			},
		},
		{
			// Item 1: Mistral refuses it with a 422 extra_forbidden.
			name: "mistral refuses stream_options", opts: []fakellm.Option{fakellm.RefuseStreamOptions(fakellm.Mistral)},
			lead: []fakellm.Reply{{ToolCalls: spawnAndWrite}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) {
				spawnedAndWrote(t, ws)
				streamOptionsAskedOnce(t, srv)
			},
		},
		{
			// Item 2: --no-stream asks for whole replies.
			name: "no-stream", args: []string{"--no-stream"},
			lead: []fakellm.Reply{{ToolCalls: spawnAndWrite}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) {
				spawnedAndWrote(t, ws)
				for _, c := range srv.Calls() {
					if c.Stream || c.Req.StreamOptions != nil {
						t.Errorf("%s's call %d was streamed with --no-stream", c.Agent, c.N)
					}
				}
			},
		},
		{
			// Item 2: Ollama drops streamed tool calls for some models; the turn is asked again unstreamed.
			name: "ollama empty streamed turn",
			lead: []fakellm.Reply{{ToolCalls: spawnAndWrite, EmptyWhenStreamed: true}, {ToolCalls: spawnAndWrite, EmptyWhenStreamed: true}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) {
				spawnedAndWrote(t, ws)
				calls := srv.Calls()
				if len(calls) < 2 || calls[0].Agent != "lead" || !calls[0].Stream || calls[1].Agent != "lead" || calls[1].Stream {
					t.Errorf("want the lead's empty streamed turn asked again unstreamed; calls %v", agentsOf(calls))
				}
			},
		},
		{
			// Item 3: parallel calls whole, one per chunk, with neither index nor id (Gemini through proxies).
			name:  "whole calls without index or id",
			lead:  []fakellm.Reply{{ToolCalls: spawnAndWrite, WholeCalls: true, NoIndex: true, NoIDs: true}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) { spawnedAndWrote(t, ws) },
		},
		{
			// Item 3: all at index 0, no id.
			name:  "whole calls all at index 0 without id",
			lead:  []fakellm.Reply{{ToolCalls: spawnAndWrite, WholeCalls: true, RepeatIndexZero: true, NoIDs: true}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) { spawnedAndWrote(t, ws) },
		},
		{
			// Item 3: two calls of the same tool, whole, without index or id.
			name: "two whole calls of one tool",
			lead: []fakellm.Reply{{ToolCalls: []fakellm.ToolCall{
				call("write_file", `{"path":"a.txt","content":"A"}`), call("write_file", `{"path":"b.txt","content":"B"}`),
			}, WholeCalls: true, NoIndex: true, NoIDs: true}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) {
				fileIs(t, ws, "a.txt", "A")
				fileIs(t, ws, "b.txt", "B")
			},
		},
		{
			// Item 4: llama.cpp's arguments as a JSON object, streamed.
			name:  "llama.cpp arguments as an object",
			lead:  []fakellm.Reply{{ToolCalls: spawnAndWrite, ArgsAsObject: true}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) { spawnedAndWrote(t, ws) },
		},
		{
			// Item 4: the same, unstreamed.
			name: "llama.cpp arguments as an object, no-stream", args: []string{"--no-stream"},
			lead:  []fakellm.Reply{{ToolCalls: spawnAndWrite, ArgsAsObject: true}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) { spawnedAndWrote(t, ws) },
		},
		{
			// Item 8: more than 300 keep-alive comments before the data.
			name:  "openrouter keep-alives",
			lead:  []fakellm.Reply{{ToolCalls: spawnAndWrite, KeepAlives: 400}, {Content: "all done", KeepAlives: 400}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) { spawnedAndWrote(t, ws) },
		},
		{
			// Item 8: DeepSeek's keep-alive while queued.
			name: "deepseek keep-alives",
			lead: []fakellm.Reply{{Content: "all done", KeepAlives: 350, KeepAlive: ": keep-alive"}},
		},
		{
			// Item 10: ids must be 9 letters and digits; the server sends none.
			name: "mistral on vllm wants nine-character ids", opts: []fakellm.Option{fakellm.RequireNineCharCallIDs()},
			lead: []fakellm.Reply{{ToolCalls: spawnAndWrite, NoIDs: true}, {ToolCalls: spawnAndWrite[1:], NoIDs: true}},
			check: func(t *testing.T, ws string, srv *fakellm.Server) {
				spawnedAndWrote(t, ws)
				nine := regexp.MustCompile(`^[A-Za-z0-9]{9}$`)
				for _, m := range readSession(t, state(ws, "sessions", "lead.jsonl")) {
					for _, tc := range m.ToolCalls {
						if !nine.MatchString(tc.ID) {
							t.Errorf("made-up id %q", tc.ID)
						}
					}
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(leadScript(tc.lead...), append(tc.opts, fakellm.WithAPIKey("test-key"))...)
			defer srv.Close()
			ws := t.TempDir()
			args := append(append([]string{"run", "--quiet"}, tc.args...), "do the work")
			r := runBin(t, ws, fakeEnv(srv), "", args...)
			worked(t, r, srv, "all done")
			if tc.check != nil {
				tc.check(t, ws, srv)
			}
		})
	}
}

func agentsOf(calls []fakellm.Call) []string {
	var out []string
	for _, c := range calls {
		s := c.Agent
		if c.Stream {
			s += "(stream)"
		}
		out = append(out, s)
	}
	return out
}

// streamOptionsAskedOnce: the refused field was sent once, for the whole
// provider (lead and teammate alike), never again.
func streamOptionsAskedOnce(t *testing.T, srv *fakellm.Server) {
	t.Helper()
	n := 0
	for _, c := range srv.Calls() {
		if c.Req.StreamOptions != nil {
			n++
		}
	}
	if n != 1 {
		t.Errorf("stream_options sent %d times, want once", n)
	}
	if srv.CallsFor("bob") == 0 {
		t.Error("bob never called the model")
	}
}

// TestNoDoneEndsTheTurnAtTheFinishChunk (item 9): a server that keeps the
// connection open and never sends [DONE]: each turn ends at its finish
// chunk (and usage chunk), not when the server hangs up.
func TestNoDoneEndsTheTurnAtTheFinishChunk(t *testing.T) {
	srv := fakellm.New(leadScript(
		fakellm.Reply{ToolCalls: spawnAndWrite, NoDone: true},
		fakellm.Reply{Content: "all done", NoDone: true},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	start := time.Now()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--quiet", "do the work")
	worked(t, r, srv, "all done")
	spawnedAndWrote(t, ws)
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the run took %s", d)
	}
}

// TestGroqUsageIsCounted (item 11): usage only in x_groq.usage.
func TestGroqUsageIsCounted(t *testing.T) {
	usage := &openai.Usage{PromptTokens: 700, CompletionTokens: 77, TotalTokens: 777}
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: spawnAndWrite[:1], UsageInXGroq: true, Usage: usage}},
	}, func(c fakellm.Call) fakellm.Reply {
		return fakellm.Reply{Content: c.Agent + ": done", UsageInXGroq: true, Usage: usage}
	}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--json", "do the work")
	mustSucceed(t, r, "run")
	if m := findMember(t, readRegistry(t, ws), "bob"); m.Tokens != 777 {
		t.Errorf("bob's tokens %d, want 777", m.Tokens)
	}
	replies := 0
	for _, line := range strings.Split(r.stdout, "\n") {
		if strings.Contains(line, `"kind":"reply","agent":"lead"`) {
			replies++
			if !strings.Contains(line, `"tokens":777`) {
				t.Errorf("a reply of the lead does not count its 777 tokens: %s", line)
			}
		}
	}
	if replies < 2 {
		t.Errorf("%d replies of the lead in the events:\n%s", replies, r.stdout)
	}
}

// failedClearly checks a run that must fail: exit 1, one sentence on
// stderr with the server's words, nothing on stdout.
func failedClearly(t *testing.T, r result, words string) {
	t.Helper()
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	oneSentence(t, r.stderr)
	if !strings.Contains(r.stderr, words) {
		t.Errorf("stderr does not carry the server's words %q:\n%s", words, r.stderr)
	}
	if strings.TrimSpace(r.stdout) != "" {
		t.Errorf("a failed run printed an answer: %q", r.stdout)
	}
}

func TestServersThatMustFailClearly(t *testing.T) {
	cases := []struct {
		name  string
		lead  fakellm.Reply
		args  []string
		words string
	}{
		// Item 12: HTTP 200 with a JSON error body, streamed and not.
		{"openai error in a 200", fakellm.OpenAIError200("The server had an error while processing your request"), nil,
			"The server had an error while processing your request"},
		{"openai error in a 200, no-stream", fakellm.OpenAIError200("The server had an error while processing your request"),
			[]string{"--no-stream"}, "The server had an error while processing your request"},
		{"vllm error in a 200", fakellm.VLLMError200("This model's maximum number of tools is 8"), nil, "maximum number of tools is 8"},
		{"vllm error in a 200, no-stream", fakellm.VLLMError200("This model's maximum number of tools is 8"), []string{"--no-stream"},
			"maximum number of tools is 8"},
		{"tgi error in a 200", fakellm.TGIError200("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096"), nil,
			"Input validation error"},
		// Item 13: OpenRouter's in-band error chunk after some text.
		{"openrouter in-band error", fakellm.Reply{Content: "I will now write the fi", InBandError: "Provider returned error: invalid tool schema", InBandCode: 400},
			nil, "Provider returned error: invalid tool schema"},
		// Item 4: a chunk that cannot be read is not a dropped stream.
		{"unreadable chunk", fakellm.Reply{ContentType: "text/event-stream",
			Body: "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":[1,2]}}]}\n\ndata: [DONE]\n\n"}, nil, "could not be read"},
		// Item 6: Gemini's error body is a JSON array.
		{"gemini error array", fakellm.GeminiErrorArray(400, "Request contains an invalid argument."), nil, "Request contains an invalid argument."},
		// Azure's content filter refusing the prompt.
		{"azure prompt filtered", fakellm.AzurePromptFiltered(), nil, "triggering Azure OpenAI's content management policy"},
		// LM Studio with no model loaded, and its SSE error event in a 200.
		{"lm studio no model loaded", fakellm.LMStudioNoModel(), nil, "No models loaded"},
		{"lm studio error event", fakellm.LMStudioStreamError("Error rendering prompt with jinja template: Unknown StringValue filter: safe"), nil,
			"Error rendering prompt with jinja template"},
		{"lm studio error, no-stream", fakellm.LMStudioError(400, "Error rendering prompt with jinja template: Unknown StringValue filter: safe"),
			[]string{"--no-stream"}, "Error rendering prompt with jinja template"},
		// LiteLLM's error body, and its error line in the middle of a stream.
		{"litellm bad request", fakellm.LiteLLMError(400, "BadRequestError", "OpenAIException - Invalid schema for function 'bash'."), nil,
			"litellm.BadRequestError: OpenAIException - Invalid schema for function 'bash'."},
		{"litellm mid-stream bad request", fakellm.LiteLLMMidStreamError("I will", 400, "BadRequestError", "AnthropicException - prompt is too long"), nil,
			"litellm.BadRequestError: AnthropicException - prompt is too long"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(fakellm.Always(tc.lead), fakellm.WithAPIKey("test-key"))
			defer srv.Close()
			ws := t.TempDir()
			args := append(append([]string{"run", "--quiet"}, tc.args...), "do the work")
			r := runBin(t, ws, fakeEnv(srv), "", args...)
			failedClearly(t, r, tc.words)
			if n := srv.CallsFor("lead"); n != 1 {
				t.Errorf("an error that will repeat was asked %d times, want once", n)
			}
		})
	}
}

// TestInBandProviderErrorIsRetried (item 13): OpenRouter's mid-stream 502
// ("Provider returned error") is the provider failing, not the request: asked
// again, and the truncated text is never the answer.
func TestInBandProviderErrorIsRetried(t *testing.T) {
	srv := fakellm.New(leadScript(
		fakellm.Reply{Content: "The answer is forty", InBandError: "Provider returned error", InBandCode: 502},
		fakellm.Reply{Content: "The answer is 42."},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	r := runBin(t, t.TempDir(), fakeEnv(srv), "", "run", "--quiet", "what is the answer")
	worked(t, r, srv, "The answer is 42.")
}

// TestCutStreamIsRetriedAndItsCallNeverRuns (item 14): a stream that ends
// cleanly with neither finish_reason nor [DONE] is a drop: retried, and the
// cut call (whose JSON still parses) never runs.
func TestCutStreamIsRetriedAndItsCallNeverRuns(t *testing.T) {
	srv := fakellm.New(leadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"cut.txt","content":"half"}`)}, NoFinish: true},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"whole.txt","content":"whole"}`)}},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--quiet", "do the work")
	worked(t, r, srv, "all done")
	noFile(t, ws, "cut.txt")
	fileIs(t, ws, "whole.txt", "whole")
	if n := srv.CallsFor("lead"); n != 3 {
		t.Errorf("the lead made %d calls, want 3 (the cut one, its retry, the last turn)", n)
	}
}

// TestOutputLimitRunsNoCall (item 15): finish_reason "length" with cut
// arguments: no call of that turn runs; the person is told, and so is the
// model (in the conversation); the limit comes from max_output_tokens.
func TestOutputLimitRunsNoCall(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{ToolCalls: []fakellm.ToolCall{
		call("write_file", `{"path":"a.txt","content":"short"}`),
		call("write_file", `{"path":"b.txt","content":"a long file the model did not finish writing"}`),
	}, FinishLength: true}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	user := "[providers.fake]\nbase_url = \"" + srv.URL() + "\"\nmax_output_tokens = 64\n"
	r := runBin(t, ws, configHome(t, user, "OPENAI_API_KEY=test-key", "AGENTTEAM_MODEL=fake-model"), "", "run", "--quiet", "write two files")
	failedClearly(t, r, "output limit")
	if !strings.Contains(r.stderr, "max_output_tokens") {
		t.Errorf("stderr does not say what to raise:\n%s", r.stderr)
	}
	noFile(t, ws, "a.txt")
	noFile(t, ws, "b.txt")
	if n := srv.CallsFor("lead"); n != 1 {
		t.Errorf("%d calls, want 1", n)
	}
	//lint:ignore SA1019 max_tokens is what agentteam sends
	if got := srv.Calls()[0].Req.MaxTokens; got != 64 {
		t.Errorf("max_tokens %d, want the configured 64", got)
	}
	told := 0
	for _, m := range readSession(t, state(ws, "sessions", "lead.jsonl")) {
		if m.Role == openai.ChatMessageRoleTool && strings.Contains(m.Content, "output limit") {
			told++
		}
	}
	if told != 2 {
		t.Errorf("%d tool answers tell the model about the output limit, want 2", told)
	}
}

// TestStalledStreamIsRetried (item 16): a stream that stops sending is given
// up after the idle timeout and asked again.
func TestStalledStreamIsRetried(t *testing.T) {
	srv := fakellm.New(leadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"stalled.txt","content":"never"}`)}, StallAfter: 3},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"a.txt","content":"A"}`)}},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, append(fakeEnv(srv), "AGENTTEAM_IDLE_TIMEOUT=1s"), "", "run", "do the work")
	mustSucceed(t, r, "run")
	if got := strings.TrimSpace(r.stdout); got != "all done" {
		t.Errorf("stdout %q", got)
	}
	noFile(t, ws, "stalled.txt")
	fileIs(t, ws, "a.txt", "A")
	if !strings.Contains(r.stderr, "retrying") {
		t.Errorf("stderr does not show the retry:\n%s", r.stderr)
	}
}

// TestLlamaCppContextErrorCompacts (item 17): exceed_context_size_error is a
// context-length error: the conversation is compacted and the turn asked again.
func TestLlamaCppContextErrorCompacts(t *testing.T) {
	overflowCompacts(t, fakellm.LlamaCppContextError())
}

// overflowCompacts: the lead's third model call is refused with overflow, a
// server's way of saying the context is too long; the conversation is
// compacted, the call asked again, and the run finishes.
func overflowCompacts(t *testing.T, overflow fakellm.Reply) {
	t.Helper()
	srv := fakellm.New(leadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"a.txt","content":"A"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"b.txt","content":"B"}`)}},
		overflow,
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--quiet", "do the work")
	worked(t, r, srv, "all done")
	if !hasEvent(readEvents(t, state(ws, "events.jsonl")), event.EventCompacted, "lead") {
		t.Error("no compaction event for the lead")
	}
	if n := srv.CallsFor("lead"); n != 4 {
		t.Errorf("the lead made %d calls, want 4 (two turns, the refused one, its compacted retry)", n)
	}
}

// TestDeepSeekReasoningGoesBack (item 5): in thinking mode with tools,
// DeepSeek refuses a turn that called tools if its reasoning_content does
// not come back; the reasoning is kept in the session.
func TestDeepSeekReasoningGoesBack(t *testing.T) {
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(leadScript(
				fakellm.Reply{Reasoning: "The lead should write a.txt first.", ReasoningField: field,
					ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"a.txt","content":"A"}`)}},
				fakellm.Reply{Reasoning: "Now b.txt.", ReasoningField: field,
					ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"b.txt","content":"B"}`)}},
				fakellm.Reply{Reasoning: "Both are written.", ReasoningField: field, Content: "all done"},
			), fakellm.RequireReasoningContent(), fakellm.WithAPIKey("test-key"))
			defer srv.Close()
			ws := t.TempDir()
			r := runBin(t, ws, fakeEnv(srv), "", "run", "--quiet", "write two files")
			worked(t, r, srv, "all done")
			fileIs(t, ws, "b.txt", "B")
			var kept []string
			for _, m := range readSession(t, state(ws, "sessions", "lead.jsonl")) {
				if m.ReasoningContent != "" {
					kept = append(kept, m.ReasoningContent)
				}
			}
			if strings.Join(kept, "|") != "The lead should write a.txt first.|Now b.txt.|Both are written." {
				t.Errorf("reasoning kept in the session: %q", kept)
			}
		})
	}
}

// TestGeminiThoughtSignaturesGoBack (item 6): Gemini 3 signs a turn's first
// tool call and refuses the next request without the signature; a
// conversation resumed by a new process, whose signatures are gone, gets
// Gemini's sentinel.
func TestGeminiThoughtSignaturesGoBack(t *testing.T) {
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: spawnAndWrite, ThoughtSignatures: true},
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"b.txt","content":"B"}`)}, ThoughtSignatures: true},
			{Content: "all done"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent != "lead" {
			return fakellm.Reply{Content: c.Agent + ": done"}
		}
		if last := c.Req.Messages[len(c.Req.Messages)-1]; strings.Contains(last.Content, "one more file") {
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"c.txt","content":"C"}`)}, ThoughtSignatures: true}
		}
		return fakellm.Reply{Content: "all done"}
	}), fakellm.RequireThoughtSignatures(), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--quiet", "do the work")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	spawnedAndWrote(t, ws)
	fileIs(t, ws, "b.txt", "B")

	noFile(t, ws, "c.txt")
	if got := strings.TrimSpace(r.stdout); got != "all done" {
		t.Errorf("stdout %q", got)
	}

	// A new process, the same conversation: the old calls' signatures are gone.
	before := srv.CallsFor("lead")
	r = runBin(t, ws, fakeEnv(srv), "", "run", "--quiet", "--resume", "one more file")
	mustSucceed(t, r, "run --resume")
	fileIs(t, ws, "c.txt", "C")
	// Refused once without signatures, then asked again with the sentinel.
	if n := srv.CallsFor("lead") - before; n != 3 {
		t.Errorf("the resumed lead made %d calls, want 3 (refused, the sentinel's, the last turn)", n)
	}
}

// TestToolCallsWrittenAsText (item 7): Qwen / Hermes <tool_call> blocks in
// the content, from a server without a tool parser, are tool calls.
func TestToolCallsWrittenAsText(t *testing.T) {
	srv := fakellm.New(leadScript(fakellm.Reply{Content: "I will spawn bob and write the file.", ToolCalls: spawnAndWrite, ToolCallsAsText: true}),
		fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--quiet", "do the work")
	worked(t, r, srv, "all done")
	spawnedAndWrote(t, ws)
}
