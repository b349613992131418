package models

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/sashabaranov/go-openai"
)

// Budget bounds what the model calls of one run or chat Spend, for every
// agent of this process together (a worker host counts its own). Zero
// fields bound nothing. A call is refused once a bound is reached, so the
// last call may take the total a little past MaxTokens or MaxCost.
type Budget struct {
	MaxCalls  int     // model calls
	MaxTokens int     // the servers' token totals
	MaxCost   float64 // at the configured prices; every model needs one
	// Ask: a person is there to answer (chat). At a bound the calls wait
	// for AnswerBudget instead of the team stopping.
	Ask bool
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

// Spend counts a process's calls against its budget; nil spends freely.
type Spend struct {
	b, step Budget      // the bounds now, and the amount a "go on" adds
	onSpent func(error) // called once, when the first call is refused
	onAsk   func(error) // with b.Ask, called when the calls start to wait
	mu      sync.Mutex
	calls   int
	tokens  int
	cost    float64
	told    bool
	// gate, while the person is asked, is closed by their answer; stopped:
	// they said no, and every call is refused.
	gate    chan struct{}
	stopped bool
}

func NewSpend(b Budget, onSpent, onAsk func(error)) *Spend {
	if !b.Set() {
		return nil
	}
	return &Spend{b: b, step: b, onSpent: onSpent, onAsk: onAsk}
}

// Take counts one call about to be made, or refuses it; at a bound a
// person is asked about, it waits for their answer.
func (s *Spend) Take(ctx context.Context) error {
	if s == nil {
		return nil
	}
	for {
		s.mu.Lock()
		err := s.spent()
		if err == nil {
			s.calls++
			s.mu.Unlock()
			return nil
		}
		if !s.b.Ask || s.stopped {
			tell := !s.told
			s.told = true
			s.mu.Unlock()
			if tell && s.onSpent != nil {
				s.onSpent(err)
			}
			return err
		}
		ask := s.gate == nil
		if ask {
			s.gate = make(chan struct{})
		}
		gate := s.gate
		s.mu.Unlock()
		if ask && s.onAsk != nil {
			s.onAsk(err)
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Answer is the person's word on a reached budget: go on raises each
// bound reached by its amount again; no refuses every call from now on.
func (s *Spend) Answer(goOn bool) (string, error) {
	if s == nil {
		return "", errors.New("the team has no budget")
	}
	s.mu.Lock()
	if s.gate == nil {
		s.mu.Unlock()
		return "", errors.New("the team has not reached its budget: there is nothing to answer")
	}
	reached := s.spent()
	close(s.gate)
	s.gate = nil
	if !goOn {
		s.stopped, s.told = true, true
		s.mu.Unlock()
		if s.onSpent != nil {
			s.onSpent(reached)
		}
		return "the team stops: its budget is spent", nil
	}
	if s.b.MaxCalls > 0 && s.calls >= s.b.MaxCalls {
		s.b.MaxCalls += s.step.MaxCalls
	}
	if s.b.MaxTokens > 0 && s.tokens >= s.b.MaxTokens {
		s.b.MaxTokens += s.step.MaxTokens
	}
	if s.b.MaxCost > 0 && s.cost >= s.b.MaxCost {
		s.b.MaxCost += s.step.MaxCost
	}
	now := s.Bounds()
	s.mu.Unlock()
	return "the team goes on; its budget is now " + now, nil
}

// bounds says the bounds now, for the person; s.mu is held.
func (s *Spend) Bounds() string {
	var out []string
	if s.b.MaxCalls > 0 {
		out = append(out, fmt.Sprintf("%d model calls", s.b.MaxCalls))
	}
	if s.b.MaxTokens > 0 {
		out = append(out, fmt.Sprintf("%d tokens", s.b.MaxTokens))
	}
	if s.b.MaxCost > 0 {
		out = append(out, FormatCost(&s.b.MaxCost))
	}
	return strings.Join(out, ", ")
}

// AskText is the sentence that asks the person whether to go on.
func AskText(err error) string {
	var be *BudgetError
	if !errors.As(err, &be) {
		return err.Error()
	}
	return "the team reached its budget of " + be.What + ": its model calls wait for your word to go on"
}

// spent is the bound reached, if any; s.mu is held.
func (s *Spend) spent() error {
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

// Add counts what a call used, at price (nil: none; a cost budget refuses
// such a model before it starts).
func (s *Spend) Add(u openai.Usage, price *Price) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens += TotalTokens(u)
	if price != nil {
		s.cost += price.Cost(u.PromptTokens, u.CompletionTokens)
	}
}

// CheckPrices refuses a cost budget when some configured model has no price.
func CheckPrices(b Budget, c Catalog) error {
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

// FormatCost writes a cost for people: "-" when unknown, else in currency
// units with two significant digits below 1 (a small cost is not shown as
// 0) and cents above.
func FormatCost(c *float64) string {
	if c == nil {
		return "-"
	}
	v := *c
	switch {
	case v == 0:
		return "0"
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	decimals := 1 - int(math.Floor(math.Log10(v)))
	return strconv.FormatFloat(v, 'f', max(decimals, 2), 64)
}
