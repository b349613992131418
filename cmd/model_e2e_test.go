package cmd

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// perCall is every fake reply's usage, so each agent's cost is its number
// of calls times one call's price.
var perCall = openai.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}

// modelScript: on "build it" the lead spawns a teammate with each way of
// choosing a model; on "again" it sends alice more work. Teammates answer.
func modelScript(c fakellm.Call) fakellm.Reply {
	msgs := c.Req.Messages
	u := perCall
	tool := func(calls ...fakellm.ToolCall) fakellm.Reply { return fakellm.Reply{ToolCalls: calls, Usage: &u} }
	if c.Agent != "lead" {
		return fakellm.Reply{Content: c.Agent + " done", Usage: &u}
	}
	switch {
	case !called(msgs, "spawn_teammate"):
		return tool(
			call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"work","model":"smart/big"}`),
			call("spawn_teammate", `{"name":"bob","role":"Reviewer","prompt":"review"}`),
			call("spawn_teammate", `{"name":"carol","role":"programmer","prompt":"work","provider":"local","model":"free"}`),
			call("spawn_teammate", `{"name":"dave","role":"programmer","prompt":"work"}`),
			call("spawn_teammate", `{"name":"erin","role":"programmer","prompt":"work","model":"gpt-5-ultra"}`),
		)
	case contentHas(msgs, "again") && !called(msgs, "send_message"):
		return tool(call("send_message", `{"to":"alice","content":"once more"}`))
	}
	return fakellm.Reply{Content: "the team is done", Usage: &u}
}

// modelConfig is a user file with three providers on two servers: cheap
// (the default, priced, with a second model), smart (priced higher, its
// own key) and local (no price), and a role that gets smart's model.
func modelConfig(cheapURL, smartURL string) string {
	return fmt.Sprintf(`provider = "cheap"

[providers.cheap]
base_url = %q
api_key_env = "CHEAP_KEY"
model = "small"
models = ["small-2"]
price_input_per_million = 1
price_output_per_million = 2

[providers.smart]
base_url = %q
api_key_env = "SMART_KEY"
model = "big"
price_input_per_million = 10
price_output_per_million = 20

[providers.local]
base_url = %q
api_key_env = "CHEAP_KEY"
model = "free"

[roles]
reviewer = "smart/big"
`, cheapURL, smartURL, cheapURL)
}

// modelServers are the cheap and local providers' server and smart's,
// each requiring its own key.
func modelServers(t *testing.T) (cheap, smart *fakellm.Server, env []string) {
	t.Helper()
	cheap = fakellm.New(modelScript, fakellm.WithAPIKey("cheap-key"))
	smart = fakellm.New(modelScript, fakellm.WithAPIKey("smart-key"))
	t.Cleanup(cheap.Close)
	t.Cleanup(smart.Close)
	env = configHome(t, modelConfig(cheap.URL(), smart.URL()), "CHEAP_KEY=cheap-key", "SMART_KEY=smart-key")
	return cheap, smart, env
}

// modelsAsked maps each agent to the models its calls to srv asked for.
func modelsAsked(srv *fakellm.Server) map[string][]string {
	out := map[string][]string{}
	for _, c := range srv.Calls() {
		if !contains(out[c.Agent], c.Req.Model) {
			out[c.Agent] = append(out[c.Agent], c.Req.Model)
		}
	}
	return out
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// callCost is what n calls cost at a provider's price per million.
func callCost(n int, in, out float64) float64 {
	return float64(n) * (float64(perCall.PromptTokens)*in + float64(perCall.CompletionTokens)*out) / 1e6
}

func nearCost(got *float64, want float64) bool { return got != nil && math.Abs(*got-want) < 1e-9 }

// TestRunGivesEachTeammateItsModel: through the binary, a teammate spawned
// with a model talks to that model on its provider's server with its
// provider's key; a role's model, "provider" plus "model", and the default
// each hold; a model that is not configured is refused to the lead with
// what is. `run --json`'s answer, `team --json` and `team` show each
// agent's model, tokens and cost, and the team's total.
func TestRunGivesEachTeammateItsModel(t *testing.T) {
	cheap, smart, env := modelServers(t)
	ws := t.TempDir()
	r := runBin(t, ws, env, "", "run", "--json", "build it")
	mustSucceed(t, r, "run")
	noViolations(t, cheap)
	noViolations(t, smart)

	if got := fmt.Sprint(modelsAsked(smart)); got != "map[alice:[big] bob:[big]]" {
		t.Errorf("smart's server saw %s, want alice and bob asking for big", got)
	}
	if got := fmt.Sprint(modelsAsked(cheap)); got != "map[carol:[free] dave:[small] lead:[small]]" {
		t.Errorf("cheap's server saw %s, want the lead and dave on small, carol on free", got)
	}
	if cheap.CallsFor("erin")+smart.CallsFor("erin") != 0 {
		t.Error("erin, spawned with a model that is not configured, ran")
	}
	lead := sessionText(t, state(ws, "sessions", "lead.jsonl"))
	for _, want := range []string{"could not spawn erin", "gpt-5-ultra", "cheap/small-2", "smart/big", "local/free"} {
		if !strings.Contains(lead, want) {
			t.Errorf("the lead's conversation lacks %q (the refusal names what is configured)", want)
		}
	}

	// The closing answer of run --json carries every agent's usage.
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var answer struct {
		Kind   event.EventKind    `json:"kind"`
		Detail string             `json:"detail"`
		Usage  registry.TeamUsage `json:"usage"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &answer); err != nil || answer.Kind != event.EventAnswer {
		t.Fatalf("last line %q is not the answer: %v", lines[len(lines)-1], err)
	}
	n := func(name string) int { return cheap.CallsFor(name) + smart.CallsFor(name) }
	wantCost := map[string]*float64{
		"lead":  ptrTo(callCost(n("lead"), 1, 2)),
		"alice": ptrTo(callCost(n("alice"), 10, 20)),
		"bob":   ptrTo(callCost(n("bob"), 10, 20)),
		"carol": nil, // local has no price
		"dave":  ptrTo(callCost(n("dave"), 1, 2)),
	}
	wantModel := map[string]string{"lead": "cheap/small", "alice": "smart/big", "bob": "smart/big", "carol": "local/free", "dave": "cheap/small"}
	checkUsage := func(where string, u registry.TeamUsage) {
		t.Helper()
		if len(u.Agents) != len(wantModel) {
			t.Fatalf("%s: usage of %d agents, want %d: %+v", where, len(u.Agents), len(wantModel), u.Agents)
		}
		total := 0.0
		for _, a := range u.Agents {
			if a.Model != wantModel[a.Agent] || a.Tokens != n(a.Agent)*1100 || a.PromptTokens != n(a.Agent)*1000 {
				t.Errorf("%s: %s on %s with %d tokens (%d prompt), want %s and %d calls' worth", where, a.Agent, a.Model, a.Tokens, a.PromptTokens, wantModel[a.Agent], n(a.Agent))
			}
			want := wantCost[a.Agent]
			switch {
			case want == nil && a.Cost != nil:
				t.Errorf("%s: %s has cost %g, but its provider has no price", where, a.Agent, *a.Cost)
			case want != nil && !nearCost(a.Cost, *want):
				t.Errorf("%s: %s's cost %v, want %g", where, a.Agent, a.Cost, *want)
			case want != nil:
				total += *want
			}
		}
		if !nearCost(u.Total.Cost, total) || fmt.Sprint(u.Unpriced) != "[carol]" {
			t.Errorf("%s: total cost %v, unpriced %v; want %g, [carol]", where, u.Total.Cost, u.Unpriced, total)
		}
	}
	checkUsage("run --json", answer.Usage)

	r = runBin(t, ws, env, "", "team", "--json")
	mustSucceed(t, r, "team --json")
	var shown struct {
		Teammates []registry.Member   `json:"teammates"`
		Lead      *registry.LeadEntry `json:"lead"`
		Usage     registry.TeamUsage  `json:"usage"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil {
		t.Fatal(err)
	}
	checkUsage("team --json", shown.Usage)
	for _, m := range shown.Teammates {
		if m.Model != wantModel[m.Name] {
			t.Errorf("team --json: %s's model %q, want %q", m.Name, m.Model, wantModel[m.Name])
		}
	}
	if shown.Lead == nil || shown.Lead.Model != "cheap/small" {
		t.Errorf("team --json: lead %+v", shown.Lead)
	}

	r = runBin(t, ws, env, "", "team")
	mustSucceed(t, r, "team")
	for _, want := range []string{"MODEL", "COST", "smart/big", "local/free", "total: ", "no price configured for carol", "lead: cheap/small"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("team's table lacks %q:\n%s", want, r.stdout)
		}
	}
}

// TestResumedTeammateKeepsItsModel: alice, spawned on smart/big, is given
// more work by a resumed run and still talks to smart's server; her tokens
// and cost count both runs.
func TestResumedTeammateKeepsItsModel(t *testing.T) {
	cheap, smart, env := modelServers(t)
	ws := t.TempDir()
	mustSucceed(t, runBin(t, ws, env, "", "run", "--quiet", "build it"), "first run")
	first := smart.CallsFor("alice")
	if first == 0 {
		t.Fatal("alice never called smart's server")
	}
	mustSucceed(t, runBin(t, ws, env, "", "run", "--quiet", "--resume", "again"), "resumed run")
	noViolations(t, cheap)
	noViolations(t, smart)
	if got := smart.CallsFor("alice"); got <= first {
		t.Fatalf("alice made %d calls to smart's server after the resume, as many as before (%d)", got, first)
	}
	if got := cheap.CallsFor("alice"); got != 0 {
		t.Fatalf("the resumed alice called the default provider %d times", got)
	}
	alice := findMember(t, readRegistry(t, ws), "alice")
	calls := smart.CallsFor("alice")
	if alice.Model != "smart/big" || alice.Tokens != calls*1100 || !nearCost(alice.Cost, callCost(calls, 10, 20)) {
		t.Fatalf("alice after the resume: %s, %d tokens, cost %v; want smart/big, %d calls' worth", alice.Model, alice.Tokens, alice.Cost, calls)
	}
}

// TestDemoTeammatesShowTheDemoModel: --demo needs no config; a teammate's
// model is the demo's, and the answer still carries the usage.
func TestDemoTeammatesShowTheDemoModel(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "", "run", "--demo", "--json", "spawn alice as programmer")
	mustSucceed(t, r, "demo run")
	cfg := readRegistry(t, ws)
	if alice := findMember(t, cfg, "alice"); alice.Model != "demo" {
		t.Fatalf("the demo teammate's model %q, want demo", alice.Model)
	}
	if !strings.Contains(r.stdout, `"usage"`) {
		t.Fatalf("run --json's answer has no usage:\n%s", r.stdout)
	}
}

func ptrTo(f float64) *float64 { return &f }

// Under --demo the demo is the only model: /model refuses another name,
// as it does a model no config file lists.
func TestModelUnderDemoTakesOnlyTheDemo(t *testing.T) {
	r := runBin(t, t.TempDir(), nil, "/model gpt-4o\n/model demo\n", "chat", "--demo")
	mustSucceed(t, r, "chat in lines")
	if !strings.Contains(r.stdout, `model "gpt-4o" is not configured: the configured models are demo`) {
		t.Fatalf("/model gpt-4o under --demo was not refused:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout, "the lead now uses gpt-4o") || strings.Count(r.stdout, "not configured") != 1 {
		t.Fatalf("the answers to /model:\n%s", r.stdout)
	}
}
