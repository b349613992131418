package models

import (
	"context"
	"strings"
	"testing"

	"github.com/sashabaranov/go-openai"
)

func TestSpendRefusesOnceABoundIsReached(t *testing.T) {
	var told []error
	s := NewSpend(Budget{MaxCalls: 3}, func(err error) { told = append(told, err) }, nil)
	for i := range 3 {
		if err := s.Take(context.Background()); err != nil {
			t.Fatalf("call %d refused: %v", i+1, err)
		}
	}
	for range 2 {
		if err := s.Take(context.Background()); err == nil {
			t.Fatal("a fourth call was allowed")
		}
	}
	if len(told) != 1 {
		t.Errorf("told %d times, want once", len(told))
	}
	if NewSpend(Budget{}, nil, nil) != nil || (*Spend)(nil).Take(context.Background()) != nil {
		t.Error("no budget should spend freely")
	}
	c := NewSpend(Budget{MaxCost: 0.01}, nil, nil)
	c.Add(openai.Usage{PromptTokens: 10000}, &Price{InputPerMillion: 2})
	if err := c.Take(context.Background()); err == nil {
		t.Error("a call past the cost budget was allowed")
	}
	if err := CheckPrices(Budget{MaxCost: 1}, Catalog{Models: []CatalogModel{{Label: "m"}}}); err == nil {
		t.Error("a cost budget with an unpriced model was taken")
	}
}

// With a person to ask, a call at the bound waits: yes raises the bound by
// its amount again and the call goes on; no refuses it and stops the team.
func TestSpendAsksAtTheBoundAndGoesOnOrStops(t *testing.T) {
	asked, stopped := make(chan error, 1), make(chan error, 1)
	s := NewSpend(Budget{MaxCalls: 2, Ask: true}, func(err error) { stopped <- err }, func(err error) { asked <- err })
	ctx := context.Background()
	for range 2 {
		if err := s.Take(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Answer(true); err == nil {
		t.Error("an answer before the budget was reached was taken")
	}
	took := make(chan error, 1)
	go func() { took <- s.Take(ctx) }()
	if err := <-asked; !strings.Contains(AskText(err), "2 model calls (--max-model-calls): its model calls wait") {
		t.Errorf("the ask says %q", AskText(err))
	}
	text, err := s.Answer(true)
	if err != nil || !strings.Contains(text, "4 model calls") {
		t.Fatalf("go on: %q, %v", text, err)
	}
	if err := <-took; err != nil {
		t.Fatalf("the waiting call was refused after yes: %v", err)
	}
	s.Take(ctx) // the fourth
	go func() { took <- s.Take(ctx) }()
	<-asked
	if _, err := s.Answer(false); err != nil {
		t.Fatal(err)
	}
	if err := <-took; err == nil {
		t.Fatal("the waiting call went on after no")
	}
	if err := <-stopped; !strings.Contains(err.Error(), "4 model calls") {
		t.Errorf("the team stopped with %v", err)
	}
	if err := s.Take(ctx); err == nil {
		t.Error("a call after no was allowed")
	}
}
