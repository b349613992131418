// Package models is what a team's agents Spend: the models the person
// configured (a catalog with prices), each agent's model and the meter of
// its calls, and the run's budget.
//
//   - An Agent model is the choice an agent has now (the lead's may change
//     between turns), counted by its meter and against the Spend.
//   - A Spend refuses a call at a bound; in a chat it waits for the
//     person's answer instead (Budget.Ask), and a "go on" raises each
//     bound reached by its amount again.
package models

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/registry"
)

// Models gives each agent its model: the commands build them from the
// config files (providers, roles) and share one client per provider and
// model among the agents that use it.
type Models interface {
	// Model is the client for model of provider: "" provider is the
	// default provider, "" model that provider's default model. A model or
	// provider that is not configured is an error naming what is.
	Model(provider, model string) (ModelChoice, error)
	// ForRole is the model the config gives role; ok is false when none.
	ForRole(role string) (provider, model string, ok bool)
	// Catalog is what is configured, for the lead's prompt and /model.
	Catalog() Catalog
}

// ModelChoice is one configured model and the client that talks to it.
type ModelChoice struct {
	Model llm.Model
	// Provider is the provider's name ("" when no config names one); Name
	// the model's id as the server knows it.
	Provider, Name string
	// Price is nil when the provider has no prices configured.
	Price *Price
	// ContextWindow is the model's context window in tokens (0: learned
	// from the server); ReplyReserve the tokens to leave for a reply (the
	// provider's max_output_tokens; 0: a quarter of the window).
	ContextWindow, ReplyReserve int
}

// Label is how the model is shown and written: "provider/model", or the
// model alone when there is no provider name.
func (c ModelChoice) Label() string { return Label(c.Provider, c.Name) }

func Label(provider, name string) string {
	if provider == "" {
		return name
	}
	return provider + "/" + name
}

// Price is what a provider charges, in currency units per million tokens.
type Price struct {
	InputPerMillion, OutputPerMillion float64
}

// Cost is what prompt input and completion output tokens cost at p.
func (p Price) Cost(prompt, completion int) float64 {
	return float64(prompt)*p.InputPerMillion/1e6 + float64(completion)*p.OutputPerMillion/1e6
}

// Catalog is what is configured: the models an agent can be given and the
// roles that have a model of their own.
type Catalog struct {
	// Default is the default model's label.
	Default string
	// Models are the configured models, the default among them.
	Models []CatalogModel
	// Roles maps a role to its model's label.
	Roles map[string]string
}

// CatalogModel is one configured model.
type CatalogModel struct {
	Label string
	Price *Price
}

// OneModel is the Models of a single model named name (tests, chat
// without a key): every agent uses it and no other can be chosen.
func OneModel(m llm.Model, name string) Models {
	return oneModel{ModelChoice{Model: m, Name: name}}
}

type oneModel struct {
	choice ModelChoice
}

func (o oneModel) Model(provider, model string) (ModelChoice, error) {
	if (provider == "" && model == "") || Label(provider, model) == o.choice.Label() {
		return o.choice, nil
	}
	return ModelChoice{}, fmt.Errorf("model %s is not configured: the only model is %s", Label(provider, model), o.choice.Label())
}

func (oneModel) ForRole(string) (string, string, bool) { return "", "", false }

func (o oneModel) Catalog() Catalog {
	return Catalog{Default: o.choice.Label(), Models: []CatalogModel{{Label: o.choice.Label(), Price: o.choice.Price}}}
}

// meter counts one agent's tokens and their cost, call by call, at the
// price of the model each call went to.
type meter struct {
	mu       sync.Mutex
	u        registry.Usage // Cost unused: cost and unpriced hold it
	cost     float64
	unpriced bool // some tokens had no price
}

// newMeter starts from what the registry already counted (a resumed agent).
func newMeter(u registry.Usage) *meter {
	m := &meter{u: u}
	m.u.Cost = nil
	if u.Cost != nil {
		m.cost = *u.Cost
	} else if u.Tokens > 0 || u.PromptTokens > 0 || u.CompletionTokens > 0 {
		m.unpriced = true
	}
	return m
}

// Add counts one call's usage at price (nil: the model has none).
func (m *meter) add(u openai.Usage, price *Price) {
	total := TotalTokens(u)
	if total == 0 && u.PromptTokens == 0 && u.CompletionTokens == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.PromptTokens += u.PromptTokens
	m.u.CompletionTokens += u.CompletionTokens
	m.u.Tokens += total
	if price == nil {
		m.unpriced = true
		return
	}
	m.cost += price.Cost(u.PromptTokens, u.CompletionTokens)
}

// TotalTokens is a call's token total: the server's, else its parts summed.
func TotalTokens(u openai.Usage) int {
	if u.TotalTokens != 0 {
		return u.TotalTokens
	}
	return u.PromptTokens + u.CompletionTokens
}

func (m *meter) usage() registry.Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.u
	if !m.unpriced {
		c := m.cost
		u.Cost = &c
	}
	return u
}

// Agent is the llm.Model an agent talks to: the choice it has now
// (the lead's may change between turns) and the meter of its calls.
type Agent struct {
	cur   atomic.Pointer[ModelChoice]
	meter *meter
	spend *Spend // the process's budget; nil spends freely
}

// NewAgent is an agent's model c, its meter starting from u, counted
// against spend (nil spends freely).
func NewAgent(c ModelChoice, u registry.Usage, spend *Spend) *Agent {
	a := &Agent{meter: newMeter(u), spend: spend}
	a.cur.Store(&c)
	return a
}

// Complete makes one model call, once the budget allows it, and counts
// what it used (llm.Model).
func (a *Agent) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := a.spend.Take(ctx); err != nil {
		return llm.Response{}, err
	}
	c := a.cur.Load()
	resp, err := c.Model.Complete(ctx, req)
	// A call that failed may still have been paid for (a usage chunk before a cut).
	a.meter.add(resp.Usage, c.Price)
	a.spend.Add(resp.Usage, c.Price)
	return resp, err
}

func (a *Agent) Choice() ModelChoice { return *a.cur.Load() }

// Usage is the agent's usage; with no tokens spent on a model without a
// price, the cost is unknown rather than 0.
func (a *Agent) Usage() registry.Usage {
	u := a.meter.usage()
	if u.Tokens == 0 && a.Choice().Price == nil {
		u.Cost = nil
	}
	return u
}

func (a *Agent) Set(c ModelChoice) { a.cur.Store(&c) }

// MaxWord bounds a model's or provider's name as a spawn gives it.
const MaxWord = 128

// CheckWord refuses a name no configured model can have, before it
// reaches a sentence, the registry or a screen.
func CheckWord(what, v string) error {
	if len(v) > MaxWord {
		return fmt.Errorf("the %s name is %d bytes, more than the %d allowed", what, len(v), MaxWord)
	}
	for _, r := range v {
		if unicode.IsSpace(r) || unicode.IsControl(r) || !unicode.IsPrint(r) {
			return fmt.Errorf("the %s name %q has spaces or control characters: give one of the configured models", what, v)
		}
	}
	return nil
}
