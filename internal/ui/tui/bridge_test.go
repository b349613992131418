package tui

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team"
)

func TestBridgeKeepsOrderAndCoalescesOnlyActivity(t *testing.T) {
	b := NewBridge()
	b.Delta(llm.Delta{Agent: "lead", Content: "a"})
	b.Event(team.Event{Agent: "alice", Payload: team.Activity{}})
	b.Delta(llm.Delta{Agent: "lead", Content: "b"})
	b.Event(team.Event{Agent: "alice", Payload: team.Activity{Tool: "bash"}})
	b.Event(team.Event{Agent: "bob", Payload: team.Activity{}})
	b.Event(team.Event{Agent: "lead", Payload: team.ToolCall{Tool: "bash"}})
	b.Delta(llm.Delta{Agent: "lead", Content: "broken"})
	b.Delta(llm.Delta{Agent: "lead", Restart: true})
	b.Delta(llm.Delta{Agent: "lead", Content: "c"})
	b.Event(team.Event{Agent: "bob", Payload: team.StatusChanged{Status: team.StatusIdle}})

	m, ok := b.take()
	if !ok {
		t.Fatal("nothing taken")
	}
	if len(m.items) != 4 {
		t.Fatalf("%d items, want 4 (text, tool call, text, status)", len(m.items))
	}
	if d := m.items[0].delta; d == nil || d.text != "ab" || d.restart {
		t.Fatalf("first item %+v, want the text ab", m.items[0])
	}
	if e := m.items[1].event; e == nil || e.Kind() != team.EventToolCall {
		t.Fatalf("second item %+v, want the tool call", m.items[1])
	}
	if d := m.items[2].delta; d == nil || d.text != "c" || !d.restart {
		t.Fatalf("third item %+v, want a restart then c", m.items[2].delta)
	}
	if got := m.activity["alice"]; got != "running bash" {
		t.Fatalf("alice's activity %q, want the latest", got)
	}
	if _, ok := m.activity["bob"]; ok {
		t.Fatal("bob's activity from before his status change was kept")
	}
	if _, ok := b.take(); ok {
		t.Fatal("take did not empty the queue")
	}
}

func TestBridgeNeverBlocksAgentsNorDropsEvents(t *testing.T) {
	b := NewBridge() // nobody runs it: a blocking subscriber would hang here
	var wg sync.WaitGroup
	const agents, each = 8, 500
	for a := 0; a < agents; a++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("mate%d", a)
			for i := 0; i < each; i++ {
				b.Event(team.Event{Agent: name, Payload: team.Activity{}})
				b.Event(team.Event{Payload: team.MessageDelivered{From: name, To: "lead", Content: fmt.Sprint(i)}})
				b.Delta(llm.Delta{Agent: name, Content: "x"})
			}
		}()
	}
	wg.Wait()
	m, _ := b.take()
	msgs, text := 0, 0
	next := map[string]int{}
	for _, it := range m.items {
		if it.event != nil {
			msgs++
			msg := it.event.Payload.(team.MessageDelivered)
			if want := fmt.Sprint(next[msg.From]); msg.Content != want {
				t.Fatalf("%s's message %s arrived where %s was due", msg.From, msg.Content, want)
			}
			next[msg.From]++
		} else {
			text += len(it.delta.text)
		}
	}
	if msgs != agents*each || text != agents*each {
		t.Fatalf("%d messages and %d bytes of text, want %d of each", msgs, text, agents*each)
	}
}

func TestBridgeRunDebouncesAndEnds(t *testing.T) {
	b := NewBridge()
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
	b.Event(team.Event{Agent: "lead", Payload: team.Answer{Text: "one two three"}})
	text, answered := "", false
	for !answered {
		m := (<-got).(batchMsg)
		for _, it := range m.items {
			if it.delta != nil {
				text += it.delta.text
			} else if it.event.Kind() == team.EventAnswer {
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
	b := NewBridge()
	b.Retry(llm.Retry{Agent: "lead", Attempt: 1, Wait: 4 * time.Second, Cause: llm.RetryRateLimit, Status: 429, Err: errors.New("HTTP 429 Too Many Requests")})
	m, _ := b.take()
	if len(m.items) != 1 || m.items[0].event.Payload.(team.Retry).Words() != "rate limited, retrying in 4 s" {
		t.Fatalf("retry became %+v", m.items)
	}
}
