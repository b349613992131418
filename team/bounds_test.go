package team

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentteam/agentteam/inbox"

	openai "github.com/sashabaranov/go-openai"
)

func TestPingPongIsSeenOnceAfterARunOfRepeats(t *testing.T) {
	var p pingPong
	seen := 0
	for i := range 20 {
		from, to, text := "alice", "bob", "ping 1"
		if i%2 == 1 {
			from, to, text = "bob", "alice", "PONG  2"
		}
		if p.observe(from, to, text) {
			seen++
			if i+1 != pingPongRun {
				t.Errorf("seen at message %d, want %d", i+1, pingPongRun)
			}
		}
	}
	if seen != 1 {
		t.Errorf("seen %d times in one run, want once", seen)
	}
	// Something new breaks the run; a new run is told again.
	p.observe("alice", "bob", "here is the parser")
	for i := range pingPongRun {
		from, to := "bob", "alice"
		if i%2 == 1 {
			from, to = "alice", "bob"
		}
		if p.observe(from, to, "ok") && i+2 < pingPongRun {
			t.Errorf("seen too early, at %d", i)
		}
	}
}

func TestPingPongIgnoresWorkAndThePeople(t *testing.T) {
	var p pingPong
	for i := range 40 {
		if p.observe("alice", "bob", "same") { // one way only: not a bounce
			t.Fatalf("a one-way stream was taken for a loop at %d", i)
		}
		if p.observe("lead", "bob", "same") || p.observe("bob", "lead", "same") {
			t.Fatal("the lead's messages were counted")
		}
	}
	for i := range 40 {
		from, to := "carol", "dave"
		if i%2 == 1 {
			from, to = to, from
		}
		if p.observe(from, to, "step "+string(rune('a'+i%26))) {
			t.Fatalf("an exchange that moves on was taken for a loop at %d", i)
		}
	}
}

func TestSpendRefusesOnceABoundIsReached(t *testing.T) {
	var told []error
	s := newSpend(Budget{MaxCalls: 3}, func(err error) { told = append(told, err) }, nil)
	for i := range 3 {
		if err := s.take(context.Background()); err != nil {
			t.Fatalf("call %d refused: %v", i+1, err)
		}
	}
	for range 2 {
		if err := s.take(context.Background()); err == nil {
			t.Fatal("a fourth call was allowed")
		}
	}
	if len(told) != 1 {
		t.Errorf("told %d times, want once", len(told))
	}
	if newSpend(Budget{}, nil, nil) != nil || (*spend)(nil).take(context.Background()) != nil {
		t.Error("no budget should spend freely")
	}
	c := newSpend(Budget{MaxCost: 0.01}, nil, nil)
	c.add(openai.Usage{PromptTokens: 10000}, &Price{InputPerMillion: 2})
	if err := c.take(context.Background()); err == nil {
		t.Error("a call past the cost budget was allowed")
	}
	if err := checkPrices(Budget{MaxCost: 1}, Catalog{Models: []CatalogModel{{Label: "m"}}}); err == nil {
		t.Error("a cost budget with an unpriced model was taken")
	}
}

// With a person to ask, a call at the bound waits: yes raises the bound by
// its amount again and the call goes on; no refuses it and stops the team.
func TestSpendAsksAtTheBoundAndGoesOnOrStops(t *testing.T) {
	asked, stopped := make(chan error, 1), make(chan error, 1)
	s := newSpend(Budget{MaxCalls: 2, Ask: true}, func(err error) { stopped <- err }, func(err error) { asked <- err })
	ctx := context.Background()
	for range 2 {
		if err := s.take(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.answer(true); err == nil {
		t.Error("an answer before the budget was reached was taken")
	}
	took := make(chan error, 1)
	go func() { took <- s.take(ctx) }()
	if err := <-asked; !strings.Contains(AskText(err), "2 model calls (--max-model-calls): its model calls wait") {
		t.Errorf("the ask says %q", AskText(err))
	}
	text, err := s.answer(true)
	if err != nil || !strings.Contains(text, "4 model calls") {
		t.Fatalf("go on: %q, %v", text, err)
	}
	if err := <-took; err != nil {
		t.Fatalf("the waiting call was refused after yes: %v", err)
	}
	s.take(ctx) // the fourth
	go func() { took <- s.take(ctx) }()
	<-asked
	if _, err := s.answer(false); err != nil {
		t.Fatal(err)
	}
	if err := <-took; err == nil {
		t.Fatal("the waiting call went on after no")
	}
	if err := <-stopped; !strings.Contains(err.Error(), "4 model calls") {
		t.Errorf("the team stopped with %v", err)
	}
	if err := s.take(ctx); err == nil {
		t.Error("a call after no was allowed")
	}
}

func TestALongReportIsCutToAMessage(t *testing.T) {
	long := strings.Repeat("é", inbox.MaxContentBytes)
	got := fitMessage(long, "sessions/alice.jsonl")
	if len(got) > inbox.MaxContentBytes || !utf8.ValidString(got) || !strings.Contains(got, "sessions/alice.jsonl") {
		t.Errorf("cut to %d bytes, valid %v, ends %q", len(got), utf8.ValidString(got), got[len(got)-80:])
	}
	if fitMessage("short", "x") != "short" {
		t.Error("a short report was changed")
	}
}

// Two teammates bouncing the same messages are seen however their
// messages interleave (both send at once, so one may send twice in a row).
func TestPingPongIsSeenWhenTheMessagesInterleave(t *testing.T) {
	var p pingPong
	order := []string{"alice", "alice", "bob", "bob", "alice", "bob", "bob", "alice", "alice", "bob"}
	seen := 0
	for _, from := range order {
		to, text := "bob", "ping"
		if from == "bob" {
			to, text = "alice", "pong"
		}
		if p.observe(from, to, text) {
			seen++
		}
	}
	if seen != 1 {
		t.Errorf("seen %d times, want once", seen)
	}
}
