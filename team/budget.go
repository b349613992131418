package team

import (
	"errors"
	"fmt"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// Budget bounds what the model calls of one run or chat spend, for every
// agent of this process together (a worker host counts its own). Zero
// fields bound nothing. A call is refused once a bound is reached, so the
// last call may take the total a little past MaxTokens or MaxCost.
type Budget struct {
	MaxCalls  int     // model calls
	MaxTokens int     // the servers' token totals
	MaxCost   float64 // at the configured prices; every model needs one
}

// Set reports whether b bounds anything.
func (b Budget) Set() bool { return b.MaxCalls > 0 || b.MaxTokens > 0 || b.MaxCost > 0 }

// BudgetError stops a team whose budget is spent.
type BudgetError struct {
	What string // "200 model calls (--max-model-calls)"
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("the team reached its budget of %s, so no more model calls were made: raise it to go on (--resume keeps the work)", e.What)
}

// ErrNoPrice is a cost budget with a model that has no price.
var ErrNoPrice = errors.New("--max-cost needs a price for every model: set price_input_per_million and price_output_per_million in each provider's config")

// spend counts a process's calls against its budget; nil spends freely.
type spend struct {
	b       Budget
	onSpent func(error) // called once, when the first call is refused
	mu      sync.Mutex
	calls   int
	tokens  int
	cost    float64
	told    bool
}

func newSpend(b Budget, onSpent func(error)) *spend {
	if !b.Set() {
		return nil
	}
	return &spend{b: b, onSpent: onSpent}
}

// take counts one call about to be made, or refuses it.
func (s *spend) take() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	err := s.spent()
	if err == nil {
		s.calls++
	}
	tell := err != nil && !s.told
	s.told = s.told || tell
	s.mu.Unlock()
	if tell && s.onSpent != nil {
		s.onSpent(err)
	}
	return err
}

// spent is the bound reached, if any; s.mu is held.
func (s *spend) spent() error {
	switch {
	case s.b.MaxCalls > 0 && s.calls >= s.b.MaxCalls:
		return &BudgetError{What: fmt.Sprintf("%d model calls (--max-model-calls)", s.b.MaxCalls)}
	case s.b.MaxTokens > 0 && s.tokens >= s.b.MaxTokens:
		return &BudgetError{What: fmt.Sprintf("%d tokens (--max-tokens; %d spent)", s.b.MaxTokens, s.tokens)}
	case s.b.MaxCost > 0 && s.cost >= s.b.MaxCost:
		return &BudgetError{What: fmt.Sprintf("%s (--max-cost; %s spent)", FormatCost(&s.b.MaxCost), FormatCost(&s.cost))}
	}
	return nil
}

// add counts what a call used, at price (nil: none; a cost budget refuses
// such a model before it starts).
func (s *spend) add(u openai.Usage, price *Price) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens += totalTokens(u)
	if price != nil {
		s.cost += price.Cost(u.PromptTokens, u.CompletionTokens)
	}
}

// checkPrices refuses a cost budget when some configured model has no price.
func checkPrices(b Budget, c Catalog) error {
	if b.MaxCost <= 0 {
		return nil
	}
	for _, m := range c.Models {
		if m.Price == nil {
			return fmt.Errorf("model %s has no price: %w", m.Label, ErrNoPrice)
		}
	}
	return nil
}
