package cmd

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// Issue 8, the servers that had no playback of their own: Azure OpenAI,
// LM Studio and LiteLLM; and the provider settings they need.

// azureUser is a user config for an Azure deployment at base: the key in
// the api-key header, the api-version on every request.
func azureUser(base, extra string) string {
	return fmt.Sprintf("[providers.azure]\nbase_url = %q\napi_key_env = \"AZURE_OPENAI_API_KEY\"\napi_key_header = \"api-key\"\nmodel = \"gpt-4o\"\n%s", base, extra)
}

// everyReply answers the lead's replies in order, then "all done", and
// teammates "done"; shape bends each of them (Azure's filters, say).
func everyReply(shape func(fakellm.Reply) fakellm.Reply, lead ...fakellm.Reply) fakellm.Script {
	inner := leadScript(lead...)
	return func(c fakellm.Call) fakellm.Reply { return shape(inner(c)) }
}

func azureFilters(r fakellm.Reply) fakellm.Reply {
	r.AzureFilters = true
	return r
}

// TestAzureDeployment: a deployment URL, the key in api-key (never in
// Authorization), api-version on every request, and Azure's filter
// annotations (a first chunk with no choices, a last one with no delta).
func TestAzureDeployment(t *testing.T) {
	cases := []struct {
		name string
		// base is the base_url written in the config, extra more provider keys.
		base  func(srv *fakellm.Server) string
		extra string
		args  []string
	}{
		{"query key", func(s *fakellm.Server) string { return s.URL() }, "query = {api-version = \"2024-10-21\"}\n", nil},
		{"query key, no-stream", func(s *fakellm.Server) string { return s.URL() }, "query = {api-version = \"2024-10-21\"}\n", []string{"--no-stream"}},
		{"api-version in the base_url", func(s *fakellm.Server) string { return s.URL() + "?api-version=2024-10-21" }, "", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(everyReply(azureFilters, fakellm.Reply{ToolCalls: spawnAndWrite}),
				fakellm.AzureDeployment("gpt4o-deploy", "2024-10-21"), fakellm.WithAPIKey("azure-key"))
			defer srv.Close()
			ws := t.TempDir()
			env := configHome(t, azureUser(tc.base(srv), tc.extra), "AZURE_OPENAI_API_KEY=azure-key")
			r := runBin(t, ws, env, "", append(append([]string{"run", "--quiet"}, tc.args...), "do the work")...)
			worked(t, r, srv, "all done")
			spawnedAndWrote(t, ws)
			for _, c := range srv.Calls() {
				if got := c.Header.Get("api-key"); got != "azure-key" {
					t.Errorf("%s's call %d: api-key %q", c.Agent, c.N, got)
				}
				if got := c.Header.Get("Authorization"); got != "" {
					t.Errorf("%s's call %d also carries Authorization %q: the key goes in one header", c.Agent, c.N, got)
				}
			}
		})
	}
}

// TestAzureWithoutItsSettingsFailsClearly: the deployment URL without the
// api-version is Azure's 404; the key in Authorization is its 401, and the
// sentence names the provider's variable, not OPENAI_API_KEY.
func TestAzureWithoutItsSettingsFailsClearly(t *testing.T) {
	srv := fakellm.New(leadScript(), fakellm.AzureDeployment("gpt4o-deploy", "2024-10-21"), fakellm.WithAPIKey("azure-key"))
	defer srv.Close()
	user := azureUser(srv.URL(), "")
	r := runBin(t, t.TempDir(), configHome(t, user, "AZURE_OPENAI_API_KEY=azure-key"), "", "run", "--quiet", "do the work")
	failedClearly(t, r, "Resource not found")

	noHeader := strings.Replace(user, "api_key_header = \"api-key\"\n", "", 1) + "query = {api-version = \"2024-10-21\"}\n"
	r = runBin(t, t.TempDir(), configHome(t, noHeader, "AZURE_OPENAI_API_KEY=azure-key"), "", "run", "--quiet", "do the work")
	failedClearly(t, r, "check AZURE_OPENAI_API_KEY")
	if strings.Contains(r.stderr, " OPENAI_API_KEY") {
		t.Errorf("the sentence names OPENAI_API_KEY: %s", r.stderr)
	}
}

// TestAuthFailureNamesTheProvidersKey (the 401 sentence): the variable the
// provider's api_key_env names, in run's one sentence.
func TestAuthFailureNamesTheProvidersKey(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Status: http.StatusUnauthorized, Content: "Incorrect API key provided."}))
	defer srv.Close()
	user := fmt.Sprintf("[providers.p]\nbase_url = %q\napi_key_env = \"P_KEY\"\nmodel = \"m\"\n", srv.URL())
	r := runBin(t, t.TempDir(), configHome(t, user, "P_KEY=wrong-key"), "", "run", "--quiet", "hello")
	failedClearly(t, r, "refused the API key (HTTP 401): check P_KEY")
	if strings.Contains(r.stderr, "OPENAI_API_KEY") {
		t.Errorf("the sentence names OPENAI_API_KEY: %s", r.stderr)
	}
	if n := srv.CallsFor("lead"); n != 1 {
		t.Errorf("a 401 was asked %d times, want once", n)
	}
}

// TestContentFilterIsNoAnswer: Azure's filter stops a reply (finish_reason
// "content_filter", the text cut): the cut text is never the answer and no
// call of that turn runs, streamed or not.
func TestContentFilterIsNoAnswer(t *testing.T) {
	for _, args := range [][]string{nil, {"--no-stream"}} {
		t.Run(strings.Join(append([]string{"run"}, args...), " "), func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "Here is the part before the filter and the part after it",
				ToolCalls:    []fakellm.ToolCall{call("write_file", `{"path":"a.txt","content":"A"}`)},
				AzureFilters: true, ContentFiltered: true}), fakellm.WithAPIKey("test-key"))
			defer srv.Close()
			ws := t.TempDir()
			r := runBin(t, ws, fakeEnv(srv), "", append(append([]string{"run", "--quiet"}, args...), "do the work")...)
			failedClearly(t, r, "content filter stopped the reply")
			noFile(t, ws, "a.txt")
			if n := srv.CallsFor("lead"); n != 1 {
				t.Errorf("a filtered reply was asked %d times, want once", n)
			}
		})
	}
}

// TestLMStudioContextOverflowCompacts: LM Studio's "Trying to keep the
// first N tokens…" (a 400 with {"error": "text"}, or an SSE error event in
// a 200) is a context-length error: the conversation is compacted.
func TestLMStudioContextOverflowCompacts(t *testing.T) {
	for name, overflow := range map[string]fakellm.Reply{
		"400":         fakellm.LMStudioContextOverflow(),
		"error event": fakellm.LMStudioStreamError("Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input."),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			overflowCompacts(t, overflow)
		})
	}
}

// TestLiteLLMMidStreamErrors: the proxy's error line in the middle of a
// stream (no choices, the code a string): a 500 from its upstream is asked
// again and the cut text is never the answer.
func TestLiteLLMMidStreamErrorIsRetried(t *testing.T) {
	srv := fakellm.New(leadScript(
		fakellm.LiteLLMMidStreamError("The answer is forty", 500, "InternalServerError", "OpenAIException - Connection error."),
		fakellm.Reply{Content: "The answer is 42."},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	r := runBin(t, t.TempDir(), fakeEnv(srv), "", "run", "--quiet", "what is the answer")
	worked(t, r, srv, "The answer is 42.")
}

// TestLiteLLMRateLimitIsRetried: LiteLLM's 429 (its body's code "429") is
// waited out like any 429.
func TestLiteLLMRateLimitIsRetried(t *testing.T) {
	limited := fakellm.LiteLLMError(http.StatusTooManyRequests, "RateLimitError", "RateLimitError: OpenAIException - Rate limit reached for gpt-4o.")
	limited.RetryAfter = "1"
	srv := fakellm.New(leadScript(limited, fakellm.Reply{ToolCalls: spawnAndWrite}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--quiet", "do the work")
	worked(t, r, srv, "all done")
	spawnedAndWrote(t, ws)
}

// TestReasoningEffortIsSent: the provider's reasoning_effort is in every
// request, the lead's and the teammates'.
func TestReasoningEffortIsSent(t *testing.T) {
	srv := fakellm.New(leadScript(fakellm.Reply{ToolCalls: spawnAndWrite}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	user := fmt.Sprintf("[providers.o]\nbase_url = %q\nmodel = \"o4-mini\"\nreasoning_effort = \"high\"\n", srv.URL())
	r := runBin(t, ws, configHome(t, user, "OPENAI_API_KEY=test-key"), "", "run", "--quiet", "do the work")
	worked(t, r, srv, "all done")
	calls := srv.Calls()
	if srv.CallsFor("bob") == 0 {
		t.Fatal("bob never called the model")
	}
	for _, c := range calls {
		if c.Req.ReasoningEffort != "high" {
			t.Errorf("%s's call %d: reasoning_effort %q, want high", c.Agent, c.N, c.Req.ReasoningEffort)
		}
	}

	// Without the setting nothing is sent.
	before := len(calls)
	r = runBin(t, t.TempDir(), fakeEnv(srv), "", "run", "--quiet", "do the work")
	mustSucceed(t, r, "run without reasoning_effort")
	for _, c := range srv.Calls()[before:] {
		if c.Req.ReasoningEffort != "" {
			t.Errorf("%s's call %d: reasoning_effort %q sent unasked", c.Agent, c.N, c.Req.ReasoningEffort)
		}
	}
}

// TestIdleTimeoutFromTheConfig: idle_timeout in a provider or in [team]
// bounds a stalled stream (the default, 120 s, would outlast runBin's
// bound); the environment wins over the files, the project over the user.
func TestIdleTimeoutFromTheConfig(t *testing.T) {
	cases := []struct {
		name, user, project string
		env                 []string
		source              string
	}{
		{name: "provider in the user file", user: "idle_timeout = \"1s\"\n", source: "user ~/.config/agentteam/config.toml"},
		{name: "[team] in the project file", project: "[team]\nidle_timeout = \"1s\"\n", source: "project .agentteam/config.toml"},
		{name: "the project over the user", user: "idle_timeout = \"10m\"\n", project: "[providers.f]\nidle_timeout = \"1s\"\n",
			source: "project .agentteam/config.toml"},
		{name: "the environment over the files", user: "idle_timeout = \"10m\"\n", env: []string{"AGENTTEAM_IDLE_TIMEOUT=1s"},
			source: "env AGENTTEAM_IDLE_TIMEOUT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(leadScript(
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"stalled.txt","content":"never"}`)}, StallAfter: 3},
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"a.txt","content":"A"}`)}},
			), fakellm.WithAPIKey("test-key"))
			defer srv.Close()
			ws := t.TempDir()
			if tc.project != "" {
				writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), tc.project)
			}
			user := fmt.Sprintf("[providers.f]\nbase_url = %q\nmodel = \"m\"\n%s", srv.URL(), tc.user)
			env := configHome(t, user, append([]string{"OPENAI_API_KEY=test-key"}, tc.env...)...)

			r := runBin(t, ws, env, "", "config")
			mustSucceed(t, r, "config")
			if !hasSetting(r.stdout, "idle_timeout", "1s", tc.source) {
				t.Errorf("config does not show idle_timeout 1s from %s:\n%s", tc.source, r.stdout)
			}

			r = runBin(t, ws, env, "", "run", "do the work")
			mustSucceed(t, r, "run")
			noFile(t, ws, "stalled.txt")
			fileIs(t, ws, "a.txt", "A")
			if !strings.Contains(r.stderr, "sent nothing for 1s") {
				t.Errorf("stderr does not show the 1 s idle timeout's retry:\n%s", r.stderr)
			}
		})
	}
}

// hasSetting: a line of `agentteam config` with that name, value and source.
func hasSetting(out, name, value, source string) bool {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == name && f[1] == value && strings.Join(f[2:], " ") == source {
			return true
		}
	}
	return false
}

// TestIdleTimeoutDefault: with nothing set, config shows the default.
func TestIdleTimeoutDefault(t *testing.T) {
	r := runBin(t, t.TempDir(), configHome(t, "", "OPENAI_API_KEY=k"), "", "config")
	mustSucceed(t, r, "config")
	if !hasSetting(r.stdout, "idle_timeout", "2m0s", "default") {
		t.Errorf("config does not show the default idle_timeout:\n%s", r.stdout)
	}
}

// TestModelsWithAzuresSettings: agentteam models sends the key in the
// provider's api_key_header and its query, as run does.
func TestModelsWithAzuresSettings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path != "/openai/models" || r.URL.Query().Get("api-version") != "2024-10-21":
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"code":"404","message":"Resource not found"}}`)
		case r.Header.Get("api-key") != "azure-key" || r.Header.Get("Authorization") != "":
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint."}}`)
		default:
			fmt.Fprint(w, `{"object":"list","data":[{"id":"gpt-4o"}]}`)
		}
	}))
	defer srv.Close()
	user := azureUser(srv.URL+"/openai", "query = {api-version = \"2024-10-21\"}\n")
	r := runBin(t, t.TempDir(), configHome(t, user, "AZURE_OPENAI_API_KEY=azure-key"), "", "models")
	if r.code != 0 || r.stdout != "gpt-4o\n" {
		t.Fatalf("models: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
}
