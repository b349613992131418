package cmd

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
)

// serverSetup is one row of the Servers table in docs/servers.md.
type serverSetup struct {
	server, line, test string
}

// readmeSetups reads the provider line and test name of each row of the
// Servers table in docs/servers.md.
func readmeSetups(t *testing.T) []serverSetup {
	t.Helper()
	b, err := os.ReadFile("../docs/servers.md")
	if err != nil {
		t.Fatal(err)
	}
	// The page is the Servers table and the notes under it.
	section := string(b)
	if !strings.HasPrefix(section, "# Servers\n") {
		t.Fatal("docs/servers.md does not start with its Servers heading")
	}
	row := regexp.MustCompile("^\\| ([^|`]+) \\| `(providers\\.[^`]+)` \\|.*\\| `TestServerSetups/([a-z.]+)` \\|$")
	var out []serverSetup
	for _, l := range strings.Split(section, "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			out = append(out, serverSetup{server: strings.TrimSpace(m[1]), line: m[2], test: m[3]})
		}
	}
	return out
}

// setupPlayback is a server's quirks, for the run of its docs line.
type setupPlayback struct {
	opts  []fakellm.Option
	lead  []fakellm.Reply
	shape func(fakellm.Reply) fakellm.Reply // bends every reply; nil: as scripted
	check func(t *testing.T, ws string, srv *fakellm.Server)
}

var writeB = []fakellm.ToolCall{call("write_file", `{"path":"b.txt","content":"B"}`)}

// serverPlaybacks: one per server the issue names, keyed by test name.
var serverPlaybacks = map[string]setupPlayback{
	"openai": {lead: []fakellm.Reply{{Status: 429, RetryAfter: "1"}, {ToolCalls: spawnAndWrite}}},
	"ollama": {
		lead: []fakellm.Reply{{ToolCalls: spawnAndWrite, EmptyWhenStreamed: true}, {ToolCalls: spawnAndWrite, EmptyWhenStreamed: true},
			{Content: "Now b.", ToolCalls: writeB, ToolCallsAsText: true}},
		check: func(t *testing.T, ws string, srv *fakellm.Server) { fileIs(t, ws, "b.txt", "B") },
	},
	"vllm": {opts: []fakellm.Option{fakellm.RequireNineCharCallIDs()},
		lead: []fakellm.Reply{{ToolCalls: spawnAndWrite, NoIDs: true, Reasoning: "spawn bob, write a.txt", ReasoningField: "reasoning"}}},
	"llamacpp": {
		lead:  []fakellm.Reply{{ToolCalls: spawnAndWrite, ArgsAsObject: true}, {ToolCalls: writeB, ArgsAsObject: true}, fakellm.LlamaCppContextError()},
		check: compacted,
	},
	"lmstudio": {
		lead:  []fakellm.Reply{{ToolCalls: spawnAndWrite}, {ToolCalls: writeB}, fakellm.LMStudioContextOverflow()},
		check: compacted,
	},
	"deepseek": {opts: []fakellm.Option{fakellm.RequireReasoningContent()},
		lead: []fakellm.Reply{{Reasoning: "spawn bob first", ToolCalls: spawnAndWrite, KeepAlives: 350, KeepAlive: ": keep-alive"},
			{Reasoning: "then b.txt", ToolCalls: writeB}}},
	"gemini": {opts: []fakellm.Option{fakellm.RequireThoughtSignatures()},
		lead: []fakellm.Reply{{ToolCalls: spawnAndWrite, ThoughtSignatures: true, WholeCalls: true, NoIndex: true, NoIDs: true},
			{ToolCalls: writeB, ThoughtSignatures: true}}},
	"openrouter": {
		lead: []fakellm.Reply{{ToolCalls: spawnAndWrite, KeepAlives: 400},
			{Content: "All do", InBandError: "Provider returned error", InBandCode: 502}},
		check: func(t *testing.T, ws string, srv *fakellm.Server) {
			for _, c := range srv.Calls() {
				if c.Header.Get("X-Title") != "agentteam" {
					t.Errorf("%s's call %d has no X-Title header", c.Agent, c.N)
				}
			}
		},
	},
	"groq":    {opts: []fakellm.Option{fakellm.RefuseStreamOptions(fakellm.Groq)}, lead: []fakellm.Reply{{ToolCalls: spawnAndWrite, UsageInXGroq: true}}},
	"mistral": {opts: []fakellm.Option{fakellm.RefuseStreamOptions(fakellm.Mistral), fakellm.RequireNineCharCallIDs()}, lead: []fakellm.Reply{{ToolCalls: spawnAndWrite, NoIDs: true}}},
	"azure": {opts: []fakellm.Option{fakellm.AzureDeployment("DEPLOYMENT", "2024-10-21")},
		lead: []fakellm.Reply{{ToolCalls: spawnAndWrite}}, shape: azureFilters},
	"tgi": {lead: []fakellm.Reply{{ToolCalls: spawnAndWrite, ArgsAsObject: true}}},
	"litellm": {lead: []fakellm.Reply{
		func() fakellm.Reply {
			r := fakellm.LiteLLMError(429, "RateLimitError", "OpenAIException - Rate limit reached.")
			r.RetryAfter = "1"
			return r
		}(),
		fakellm.LiteLLMMidStreamError("I will spa", 500, "InternalServerError", "OpenAIException - Connection error."),
		{ToolCalls: spawnAndWrite}}},
}

func compacted(t *testing.T, ws string, srv *fakellm.Server) {
	t.Helper()
	if !hasEvent(readEvents(t, state(ws, "events.jsonl")), event.EventCompacted, "lead") {
		t.Error("no compaction event for the lead")
	}
}

// TestServerSetups runs each provider line of the Servers table in docs/servers.md, as
// written but for base_url's address, against its server's playback.
func TestServerSetups(t *testing.T) {
	setups := readmeSetups(t)
	named := map[string]bool{}
	for _, s := range setups {
		named[s.server] = true
	}
	for _, server := range []string{"OpenAI", "Ollama", "vLLM", "llama.cpp", "LM Studio", "DeepSeek", "Gemini", "OpenRouter",
		"Groq", "Mistral", "Azure OpenAI", "TGI", "LiteLLM"} {
		if !named[server] {
			t.Errorf("docs/servers.md's table has no tested line for %s", server)
		}
	}
	for _, s := range setups {
		t.Run(s.test, func(t *testing.T) {
			t.Parallel()
			pb, ok := serverPlaybacks[s.test]
			if !ok {
				t.Fatalf("no playback for %s", s.test)
			}
			var file struct {
				Providers map[string]struct {
					BaseURL   string `toml:"base_url"`
					APIKeyEnv string `toml:"api_key_env"`
				} `toml:"providers"`
			}
			if _, err := toml.Decode(s.line, &file); err != nil || len(file.Providers) != 1 {
				t.Fatalf("the docs line for %s is not one provider: %v", s.server, err)
			}
			var base, keyEnv string
			for _, p := range file.Providers {
				base, keyEnv = p.BaseURL, p.APIKeyEnv
			}
			script := leadScript(pb.lead...)
			if pb.shape != nil {
				script = everyReply(pb.shape, pb.lead...)
			}
			srv := fakellm.New(script, append(pb.opts, fakellm.WithAPIKey("test-key"))...)
			defer srv.Close()
			user := strings.Replace(s.line, `base_url = "`+base+`"`, `base_url = "`+srv.URL()+`"`, 1)
			ws := t.TempDir()
			r := runBin(t, ws, configHome(t, user, keyEnv+"=test-key"), "", "run", "--quiet", "do the work")
			worked(t, r, srv, "all done")
			spawnedAndWrote(t, ws)
			if pb.check != nil {
				pb.check(t, ws, srv)
			}
		})
	}
}
