package models

import (
	"math"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/team/registry"
)

func TestPriceCost(t *testing.T) {
	cases := []struct {
		price              Price
		prompt, completion int
		want               float64
	}{
		{Price{2.5, 10}, 1000, 500, 0.0025 + 0.005},
		{Price{0.15, 0.6}, 1_000_000, 1_000_000, 0.75},
		{Price{3, 15}, 0, 0, 0},
		{Price{0, 0}, 5000, 5000, 0}, // a free model is a real 0
	}
	for _, c := range cases {
		if got := c.price.Cost(c.prompt, c.completion); !near(got, c.want) {
			t.Errorf("%+v.Cost(%d, %d) = %g, want %g", c.price, c.prompt, c.completion, got, c.want)
		}
	}
}

func TestMeterPricesEachCallAtItsModelsPrice(t *testing.T) {
	m := newMeter(registry.Usage{})
	m.add(openai.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100}, &Price{1, 2})
	m.add(openai.Usage{PromptTokens: 2000, CompletionTokens: 200}, &Price{10, 20}) // no total: summed
	u := m.usage()
	if u.PromptTokens != 3000 || u.CompletionTokens != 300 || u.Tokens != 3300 {
		t.Fatalf("usage %+v", u)
	}
	want := 1000*1/1e6 + 100*2/1e6 + 2000*10/1e6 + 200*20/1e6
	if u.Cost == nil || !near(*u.Cost, want) {
		t.Fatalf("cost %v, want %g", u.Cost, want)
	}
	// One unpriced call makes the whole cost unknown: never a made-up figure.
	m.add(openai.Usage{PromptTokens: 1, CompletionTokens: 1, TotalTokens: 2}, nil)
	if u := m.usage(); u.Cost != nil || u.Tokens != 3302 {
		t.Fatalf("after an unpriced call: %+v, want tokens 3302 and no cost", u)
	}
}

func TestMeterGoesOnFromTheRegistry(t *testing.T) {
	cost := 0.5
	m := newMeter(registry.Usage{PromptTokens: 10, CompletionTokens: 5, Tokens: 15, Cost: &cost})
	m.add(openai.Usage{PromptTokens: 1_000_000, TotalTokens: 1_000_000}, &Price{1, 1})
	if u := m.usage(); u.Tokens != 1_000_015 || u.Cost == nil || !near(*u.Cost, 1.5) {
		t.Fatalf("resumed usage %+v (cost %v), want 1000015 tokens, cost 1.5", u, u.Cost)
	}
	// Tokens counted earlier without a price stay unpriced after a resume.
	m = newMeter(registry.Usage{PromptTokens: 10, Tokens: 10})
	m.add(openai.Usage{PromptTokens: 10, TotalTokens: 10}, &Price{1, 1})
	if u := m.usage(); u.Cost != nil {
		t.Fatalf("cost %v of a teammate whose earlier tokens had no price", *u.Cost)
	}
}

func TestFormatCost(t *testing.T) {
	small := 0.0000123
	for _, c := range []struct {
		cost *float64
		want string
	}{{nil, "-"}, {ptr(0), "0"}, {&small, "0.000012"}, {ptr(0.0123), "0.012"}, {ptr(0.5), "0.50"}, {ptr(12.345), "12.35"}} {
		if got := FormatCost(c.cost); got != c.want {
			t.Errorf("FormatCost(%v) = %q, want %q", c.cost, got, c.want)
		}
	}
}
func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
func ptr(f float64) *float64 { return &f }
