package bridge

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

func TestBridgeKeepsOrderAndCoalescesOnlyActivity(t *testing.T) {
	b := New()
	b.Delta(llm.Delta{Agent: "lead", Content: "a"})
	b.Event(event.Event{Agent: "alice", Payload: event.Activity{}})
	b.Delta(llm.Delta{Agent: "lead", Content: "b"})
	b.Event(event.Event{Agent: "alice", Payload: event.Activity{Tool: "bash"}})
	b.Event(event.Event{Agent: "bob", Payload: event.Activity{}})
	b.Event(event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "bash"}})
	b.Delta(llm.Delta{Agent: "lead", Content: "broken"})
	b.Delta(llm.Delta{Agent: "lead", Restart: true})
	b.Delta(llm.Delta{Agent: "lead", Content: "c"})
	b.Event(event.Event{Agent: "bob", Payload: event.StatusChanged{Status: registry.StatusIdle}})

	m, ok := b.Take()
	if !ok {
		t.Fatal("nothing taken")
	}
	if len(m.Items) != 4 {
		t.Fatalf("%d items, want 4 (text, tool call, text, status)", len(m.Items))
	}
	if d := m.Items[0].Delta; d == nil || d.Text != "ab" || d.Restart {
		t.Fatalf("first Item %+v, want the text ab", m.Items[0])
	}
	if e := m.Items[1].Event; e == nil || e.Kind() != event.EventToolCall {
		t.Fatalf("second Item %+v, want the tool call", m.Items[1])
	}
	if d := m.Items[2].Delta; d == nil || d.Text != "c" || !d.Restart {
		t.Fatalf("third Item %+v, want a restart then c", m.Items[2].Delta)
	}
	if got := m.Activity["alice"]; got != "running bash" {
		t.Fatalf("alice's activity %q, want the latest", got)
	}
	if _, ok := m.Activity["bob"]; ok {
		t.Fatal("bob's activity from before his status change was kept")
	}
	if _, ok := b.Take(); ok {
		t.Fatal("take did not empty the queue")
	}
}

func TestBridgeNeverBlocksAgentsNorDropsEvents(t *testing.T) {
	b := New() // nobody runs it: a blocking subscriber would hang here
	var wg sync.WaitGroup
	const agents, each = 8, 500
	for a := 0; a < agents; a++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("mate%d", a)
			for i := 0; i < each; i++ {
				b.Event(event.Event{Agent: name, Payload: event.Activity{}})
				b.Event(event.Event{Payload: event.MessageDelivered{From: name, To: "lead", Content: fmt.Sprint(i)}})
				b.Delta(llm.Delta{Agent: name, Content: "x"})
			}
		}()
	}
	wg.Wait()
	m, _ := b.Take()
	msgs, text := 0, 0
	next := map[string]int{}
	for _, it := range m.Items {
		if it.Event != nil {
			msgs++
			msg := it.Event.Payload.(event.MessageDelivered)
			if want := fmt.Sprint(next[msg.From]); msg.Content != want {
				t.Fatalf("%s's message %s arrived where %s was due", msg.From, msg.Content, want)
			}
			next[msg.From]++
		} else {
			text += len(it.Delta.Text)
		}
	}
	if msgs != agents*each || text != agents*each {
		t.Fatalf("%d messages and %d bytes of text, want %d of each", msgs, text, agents*each)
	}
}

func TestBridgeRunDebouncesAndEnds(t *testing.T) {
	b := New()
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan tea.Msg, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Run(ctx, func(m tea.Msg) { got <- m }, 5*time.Millisecond)
	}()
	for _, s := range []string{"one ", "two ", "three"} {
		b.Delta(llm.Delta{Agent: "lead", Content: s})
	}
	b.Event(event.Event{Agent: "lead", Payload: event.Answer{Text: "one two three"}})
	text, answered := "", false
	for !answered {
		m := (<-got).(Batch)
		for _, it := range m.Items {
			if it.Delta != nil {
				text += it.Delta.Text
			} else if it.Event.Kind() == event.EventAnswer {
				answered = true
			}
		}
	}
	if text != "one two three" {
		t.Fatalf("streamed %q before the answer", text)
	}
	cancel()
	<-done
}

func TestBridgeRetryBeforeTheTeamOpens(t *testing.T) {
	b := New()
	b.Retry(llm.Retry{Agent: "lead", Attempt: 1, Wait: 4 * time.Second, Cause: llm.RetryRateLimit, Status: 429, Err: errors.New("HTTP 429 Too Many Requests")})
	m, _ := b.Take()
	if len(m.Items) != 1 || m.Items[0].Event.Payload.(event.Retry).Words() != "rate limited, retrying in 4 s" {
		t.Fatalf("retry became %+v", m.Items)
	}
}

// TestBridgeCarriesReasoning: thinking alone is not dropped, and thinking
// after text starts a new run (the next turn's).
func TestBridgeCarriesReasoning(t *testing.T) {
	b := New()
	b.Delta(llm.Delta{Agent: "lead", Reasoning: "think "})
	b.Delta(llm.Delta{Agent: "lead", Reasoning: "more"})
	b.Delta(llm.Delta{Agent: "lead", Content: "text"})
	b.Delta(llm.Delta{Agent: "lead", Reasoning: "next turn"})
	m, ok := b.Take()
	if !ok || len(m.Items) != 2 {
		t.Fatalf("items %+v, want two runs", m.Items)
	}
	if d := m.Items[0].Delta; d.Reasoning != "think more" || d.Text != "text" {
		t.Errorf("first run %+v", d)
	}
	if d := m.Items[1].Delta; d.Reasoning != "next turn" || d.Text != "" {
		t.Errorf("second run %+v", d)
	}
}
