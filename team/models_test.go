package team

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/prompt"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

func TestSumUsage(t *testing.T) {
	c1, c2 := 0.25, 0.5
	tu := registry.SumUsage([]registry.AgentUsage{
		{Agent: "lead", Usage: registry.Usage{PromptTokens: 10, CompletionTokens: 1, Tokens: 11, Cost: &c1}},
		{Agent: "alice", Usage: registry.Usage{PromptTokens: 20, CompletionTokens: 2, Tokens: 22}},
		{Agent: "bob", Usage: registry.Usage{PromptTokens: 30, CompletionTokens: 3, Tokens: 33, Cost: &c2}},
		{Agent: "carol"}, // spent nothing, no price: not unpriced
	})
	if tu.Total.Tokens != 66 || tu.Total.PromptTokens != 60 || tu.Total.CompletionTokens != 6 {
		t.Fatalf("total %+v", tu.Total)
	}
	if tu.Total.Cost == nil || !near(*tu.Total.Cost, 0.75) {
		t.Fatalf("total cost %v, want 0.75", tu.Total.Cost)
	}
	if fmt.Sprint(tu.Unpriced) != "[alice]" {
		t.Fatalf("unpriced %v, want [alice]", tu.Unpriced)
	}
	none := registry.SumUsage([]registry.AgentUsage{{Agent: "lead", Usage: registry.Usage{Tokens: 5}}})
	if none.Total.Cost != nil {
		t.Fatalf("a team with no price has cost %v", *none.Total.Cost)
	}
}

// testModels is a Models over one fake server: each name is a client that
// asks the server for that model, priced as prices says (absent: no price).
type testModels struct {
	clients map[string]models.ModelChoice
	roles   map[string]string
	def     string
}

func newTestModels(srv *fakellm.Server, def string, prices map[string]*models.Price, roles map[string]string) *testModels {
	tm := &testModels{clients: map[string]models.ModelChoice{}, roles: roles, def: def}
	for name, p := range prices {
		tm.clients[name] = models.ModelChoice{Provider: "fake", Name: name, Price: p,
			Model: llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: name, Stream: true,
				BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond})}
	}
	return tm
}

func (tm *testModels) Model(provider, model string) (models.ModelChoice, error) {
	if model == "" {
		model = tm.def
	}
	model = strings.TrimPrefix(model, "fake/")
	c, ok := tm.clients[model]
	if !ok || (provider != "" && provider != "fake") {
		return models.ModelChoice{}, fmt.Errorf("model %s is not configured", models.Label(provider, model))
	}
	return c, nil
}

func (tm *testModels) ForRole(role string) (string, string, bool) {
	m, ok := tm.roles[role]
	return "", m, ok
}

func (tm *testModels) Catalog() models.Catalog {
	c := models.Catalog{Default: "fake/" + tm.def, Roles: map[string]string{}}
	for name, mc := range tm.clients {
		c.Models = append(c.Models, models.CatalogModel{Label: mc.Label(), Price: mc.Price})
		_ = name
	}
	for r, m := range tm.roles {
		c.Roles[r] = "fake/" + m
	}
	return c
}

// TestTeammatesTalkToTheirModels: a model asked for, a role's model and the
// default each reach the server as the request's model, an unknown one is
// refused to the lead, and each agent's cost is its tokens at its price.
func TestTeammatesTalkToTheirModels(t *testing.T) {
	usage := &openai.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{Usage: usage, ToolCalls: []fakellm.ToolCall{
			taskCall("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"go","model":"free"}`),
			taskCall("spawn_teammate", `{"name":"bob","role":"reviewer","prompt":"go"}`),
			taskCall("spawn_teammate", `{"name":"carol","role":"tester","prompt":"go"}`),
			taskCall("spawn_teammate", `{"name":"dave","role":"tester","prompt":"go","model":"huge"}`),
		}}},
	}, func(c fakellm.Call) fakellm.Reply {
		return fakellm.Reply{Content: c.Agent + " done", Usage: usage}
	})
	srv := fakellm.New(script)
	defer srv.Close()
	modelSet := newTestModels(srv, "small",
		map[string]*models.Price{"small": {InputPerMillion: 1, OutputPerMillion: 2}, "big": {InputPerMillion: 10, OutputPerMillion: 20}, "free": nil},
		map[string]string{"reviewer": "big"})
	tm := newTestTeam(t, srv, Options{Models: modelSet})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := tm.Run(ctx, "build it"); err != nil {
		t.Fatal(err)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
	want := map[string]string{"lead": "small", "alice": "free", "bob": "big", "carol": "small"}
	for _, c := range srv.Calls() {
		if c.Req.Model != want[c.Agent] {
			t.Errorf("%s's call %d asked for model %q, want %q", c.Agent, c.N, c.Req.Model, want[c.Agent])
		}
	}
	if srv.CallsFor("dave") != 0 {
		t.Error("dave, asked with a model that is not configured, ran")
	}
	refused := false
	for _, m := range tm.Lead().Messages() {
		if m.Role == openai.ChatMessageRoleTool && strings.Contains(m.Content, "could not spawn dave") && strings.Contains(m.Content, "huge") {
			refused = true
		}
	}
	if !refused {
		t.Error("the lead was not told that dave's model is not configured")
	}

	c, err := tm.Registry().Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if c.Find("dave") >= 0 {
		t.Error("dave is in the registry")
	}
	cost := func(p models.Price, calls int) float64 { return float64(calls) * p.Cost(1000, 100) }
	wantCost := map[string]*float64{
		"alice": nil,
		"bob":   ptr(cost(models.Price{InputPerMillion: 10, OutputPerMillion: 20}, srv.CallsFor("bob"))),
		"carol": ptr(cost(models.Price{InputPerMillion: 1, OutputPerMillion: 2}, srv.CallsFor("carol"))),
	}
	for _, m := range c.Teammates {
		if m.Model != "fake/"+want[m.Name] || m.ModelName != want[m.Name] || m.Provider != "fake" {
			t.Errorf("%s's registry model %+v, want fake/%s", m.Name, m.ModelRef, want[m.Name])
		}
		if m.Tokens != 1100*srv.CallsFor(m.Name) || m.PromptTokens != 1000*srv.CallsFor(m.Name) {
			t.Errorf("%s: %d tokens (%d prompt) for %d calls", m.Name, m.Tokens, m.PromptTokens, srv.CallsFor(m.Name))
		}
		if !sameCost(m.Cost, wantCost[m.Name]) {
			t.Errorf("%s's cost %v, want %v", m.Name, deref(m.Cost), deref(wantCost[m.Name]))
		}
	}
	if c.Lead == nil || c.Lead.Model != "fake/small" || !sameCost(c.Lead.Cost, ptr(cost(models.Price{InputPerMillion: 1, OutputPerMillion: 2}, srv.CallsFor("lead")))) {
		t.Fatalf("the registry's lead entry %+v", c.Lead)
	}
	u := tm.Models().Usage()
	if fmt.Sprint(u.Unpriced) != "[alice]" {
		t.Errorf("unpriced %v, want [alice]", u.Unpriced)
	}
	total := *c.Lead.Cost + *wantCost["bob"] + *wantCost["carol"]
	if u.Total.Cost == nil || !near(*u.Total.Cost, total) {
		t.Errorf("team cost %v, want %g", deref(u.Total.Cost), total)
	}
	if reg := c.Usage(); !sameCost(reg.Total.Cost, u.Total.Cost) || reg.Total.Tokens != u.Total.Tokens {
		t.Errorf("the registry's total %+v differs from the team's %+v", reg.Total, u.Total)
	}
}

// TestSetLeadModelSwitchesForTheNextTurns: the lead's next request goes to
// the new model and is priced at its price; an unknown model is refused.
func TestSetLeadModelSwitchesForTheNextTurns(t *testing.T) {
	usage := &openai.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok", Usage: usage}))
	defer srv.Close()
	modelSet := newTestModels(srv, "small", map[string]*models.Price{"small": {InputPerMillion: 1, OutputPerMillion: 2}, "big": {InputPerMillion: 10, OutputPerMillion: 20}}, nil)
	tm := newTestTeam(t, srv, Options{Models: modelSet})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := tm.Run(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := tm.Models().SetLead("huge"); err == nil || !strings.Contains(err.Error(), "huge") {
		t.Fatalf("switching to an unknown model: %v", err)
	}
	label, err := tm.Models().SetLead("fake/big")
	if err != nil || label != "fake/big" || tm.Models().Lead() != "fake/big" {
		t.Fatalf("switch: %q, %v; lead model %q", label, err, tm.Models().Lead())
	}
	if _, err := tm.Run(ctx, "two"); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if len(calls) != 2 || calls[0].Req.Model != "small" || calls[1].Req.Model != "big" {
		t.Fatalf("lead's calls asked for %v, want small then big", modelsOf(calls))
	}
	want := models.Price{InputPerMillion: 1, OutputPerMillion: 2}.Cost(1000, 100) + models.Price{InputPerMillion: 10, OutputPerMillion: 20}.Cost(1000, 100)
	c, _ := tm.Registry().Read(t.Context())
	if c.Lead == nil || c.Lead.Model != "fake/big" || !sameCost(c.Lead.Cost, &want) || c.Lead.Tokens != 2200 {
		t.Fatalf("lead entry %+v (cost %v), want fake/big, 2200 tokens, cost %g", c.Lead, deref(c.Lead.Cost), want)
	}
}

func modelsOf(calls []fakellm.Call) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Req.Model)
	}
	return out
}

func ptr(f float64) *float64 { return &f }

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func sameCost(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return near(*a, *b)
}

func deref(c *float64) any {
	if c == nil {
		return "none"
	}
	return *c
}

// TestResumedTeammateKeepsItsModelAndCount: alice, spawned on big, comes
// back on big after a resume (not the default, not her role's), and her
// tokens and cost go on from the registry's.
func TestResumedTeammateKeepsItsModelAndCount(t *testing.T) {
	usage := &openai.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok", Usage: usage}))
	defer srv.Close()
	modelSet := newTestModels(srv, "small", map[string]*models.Price{"small": {InputPerMillion: 1, OutputPerMillion: 2}, "big": {InputPerMillion: 10, OutputPerMillion: 20}}, map[string]string{"programmer": "small"})
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	open := func(resume bool) (*Team, *statusWatcher) {
		w := newStatusWatcher()
		tm, err := Open(context.Background(), Options{Workspace: ws, Resume: resume, OnEvent: w.on, PollInterval: 50 * time.Millisecond, Models: modelSet})
		if err != nil {
			t.Fatal(err)
		}
		return tm, w
	}
	first, w := open(false)
	if err := first.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "go", Model: "big"}); err != nil {
		t.Fatal(err)
	}
	w.wait(t, "alice", string(registry.StatusIdle))
	first.Close(context.Background())

	second, w2 := open(true)
	defer second.Close(context.Background())
	if err := second.Messenger().Send(context.Background(), "lead", "alice", "once more"); err != nil {
		t.Fatal(err)
	}
	w2.wait(t, "alice", string(registry.StatusWorking))
	// Idle after a second cycle: the registry counts it.
	testkit.Eventually(t, 20*time.Second, "alice idle after her second cycle", func() bool {
		c, _ := second.Registry().Read(t.Context())
		i := c.Find("alice")
		return i >= 0 && c.Teammates[i].Cycles == 2 && c.Teammates[i].Status == registry.StatusIdle
	})
	calls := srv.Calls()
	if len(calls) != 2 || calls[0].Req.Model != "big" || calls[1].Req.Model != "big" {
		t.Fatalf("alice's calls asked for %v, want big twice", modelsOf(calls))
	}
	c, _ := second.Registry().Read(t.Context())
	alice := c.Teammates[c.Find("alice")]
	want := 2 * models.Price{InputPerMillion: 10, OutputPerMillion: 20}.Cost(1000, 100)
	if alice.Model != "fake/big" || alice.Tokens != 2200 || !sameCost(alice.Cost, &want) {
		t.Fatalf("alice after the resume: model %s, %d tokens, cost %v; want fake/big, 2200, %g", alice.Model, alice.Tokens, deref(alice.Cost), want)
	}
}

func TestLeadPromptListsTheModels(t *testing.T) {
	one := prompt.Lead("t", "/w", models.Catalog{Default: "gpt", Models: []models.CatalogModel{{Label: "gpt"}}})
	if strings.Contains(one, "Models") {
		t.Errorf("with one model and no roles the prompt speaks of models:\n%s", one)
	}
	p := prompt.Lead("t", "/w", models.Catalog{
		Default: "cheap/small",
		Models:  []models.CatalogModel{{Label: "cheap/small", Price: &models.Price{InputPerMillion: 0.15, OutputPerMillion: 0.6}}, {Label: "local/free"}},
		Roles:   map[string]string{"reviewer": "smart/big", "writer": "cheap/small"},
	})
	for _, want := range []string{"cheap/small (default, 0.15 in / 0.6 out per million tokens)", "local/free", "reviewer → smart/big, writer → cheap/small"} {
		if !strings.Contains(p, want) {
			t.Errorf("the lead's prompt lacks %q:\n%s", want, p)
		}
	}
}

// TestSpawnRefusesAHostileModelName: a model name with a control character
// or beyond the bound never reaches the models, the registry or a screen,
// even where any name is a model (--demo).
func TestSpawnRefusesAHostileModelName(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	anyName := &testModels{clients: map[string]models.ModelChoice{}}
	tm := newTestTeam(t, srv, Options{Models: anyModel{anyName, srv}})
	for _, bad := range []string{"big\x1b[2J", "big model", strings.Repeat("m", 200)} {
		err := tm.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "r", Prompt: "go", Model: bad})
		if err == nil {
			t.Fatalf("spawn with model %q accepted", bad)
		}
		if _, err := tm.Models().SetLead(bad); err == nil {
			t.Fatalf("the lead switched to %q", bad)
		}
	}
	if c, _ := tm.Registry().Read(t.Context()); len(c.Teammates) != 0 {
		t.Fatalf("registry %+v", c.Teammates)
	}
	// The same resolver takes a plain name.
	if err := tm.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "r", Prompt: "go", Model: "whatever"}); err != nil {
		t.Fatal(err)
	}
}

// anyModel takes every name, as --demo does.
type anyModel struct {
	*testModels
	srv *fakellm.Server
}

func (a anyModel) Model(provider, model string) (models.ModelChoice, error) {
	return models.ModelChoice{Provider: provider, Name: model, Model: llm.NewClient(llm.ClientConfig{BaseURL: a.srv.URL(), APIKey: "k", Model: model})}, nil
}
