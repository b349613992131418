package team

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/event"
)

// chatTeam opens a team whose answers and errors arrive on a channel.
func chatTeam(t *testing.T, srv *fakellm.Server) (*Team, <-chan event.Event) {
	tm, events, _ := chatTeamActivity(t, srv)
	return tm, events
}

// chatTeamActivity also reports what the agents do (EventActivity details).
func chatTeamActivity(t *testing.T, srv *fakellm.Server) (*Team, <-chan event.Event, <-chan string) {
	t.Helper()
	events := make(chan event.Event, 256)
	activity := make(chan string, 1024)
	tm := newTestTeam(t, srv, Options{MaxWorkers: 2, MaxQueue: 10, OnEvent: func(e event.Event) {
		switch p := e.Payload.(type) {
		case event.Answer, event.Failure:
			events <- e
		case event.Activity:
			select {
			case activity <- e.Agent + ": " + p.Words():
			default:
			}
		}
	}})
	return tm, events, activity
}

// said is what an answer or error says, as the flat event's Detail did.
func said(e event.Event) string {
	switch p := e.Payload.(type) {
	case event.Answer:
		if p.Interrupted {
			return "(interrupted)" // the flat event's detail of an interrupted answer
		}
		return p.Text
	case event.Failure:
		return p.Text
	}
	return ""
}

// isError is the flat event's IsError of an answer or error.
func isError(e event.Event) bool {
	switch p := e.Payload.(type) {
	case event.Answer:
		return p.Interrupted
	case event.Failure:
		return true
	}
	return false
}

func nextAnswer(t *testing.T, events <-chan event.Event) event.Event {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(20 * time.Second):
		t.Fatal("no answer from the lead")
	}
	return event.Event{}
}

func TestChatAnswersAndWakesOnReports(t *testing.T) {
	release := make(chan struct{}) // alice reports only after the lead's first answer
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{{Name: "spawn_teammate", Args: `{"name":"alice","role":"r","prompt":"report"}`}}},
			{Content: "spawned alice"},
			{Content: "alice reported"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		<-release
		return fakellm.Reply{Content: "alice's report"}
	})
	srv := fakellm.New(script)
	defer srv.Close()
	tm, events := chatTeam(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chat := tm.StartChat(ctx, true)
	if err := chat.Say("spawn alice"); err != nil {
		t.Fatal(err)
	}
	if a := nextAnswer(t, events); said(a) != "spawned alice" {
		t.Fatalf("first answer %q", said(a))
	}
	close(release)
	// Nobody says anything: the report alone wakes the lead.
	if a := nextAnswer(t, events); said(a) != "alice reported" {
		t.Fatalf("second answer %q", said(a))
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
	cancel()
	<-chat.Done()
}

func TestChatWithAutoOffWaitsForThePerson(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{{Name: "spawn_teammate", Args: `{"name":"alice","role":"r","prompt":"report"}`}}},
			{Content: "spawned alice"},
			{Content: "you asked; alice had reported"},
		},
		"alice": {{Content: "alice's report"}},
	}, nil)
	// Alice reports only once the lead's first cycle is over: a report
	// arriving during it is taken in by that cycle, never left unread.
	firstAnswered := make(chan struct{})
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" {
			<-firstAnswered
		}
		return script(c)
	})
	defer srv.Close()
	release := sync.OnceFunc(func() { close(firstAnswered) })
	defer release() // before the server closes, whatever fails
	tm, events := chatTeam(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chat := tm.StartChat(ctx, false)
	if err := chat.Say("spawn alice"); err != nil {
		t.Fatal(err)
	}
	a := nextAnswer(t, events)
	release()
	if said(a) != "spawned alice" {
		t.Fatalf("first answer %q", said(a))
	}
	// Wait for alice's report to be in the lead's inbox; the lead must not wake.
	testkit.Eventually(t, 20*time.Second, "alice's report in the lead's inbox", func() bool {
		has, _ := tm.Mailbox().HasUnread(ctx, "lead")
		return has
	})
	calls := srv.CallsFor("lead")
	select {
	case e := <-events:
		t.Fatalf("the lead woke by itself with auto off: %+v", e)
	case <-time.After(300 * time.Millisecond):
	}
	if srv.CallsFor("lead") != calls {
		t.Fatal("the lead called the model with auto off")
	}
	if err := chat.Say("any news?"); err != nil {
		t.Fatal(err)
	}
	if a := nextAnswer(t, events); said(a) != "you asked; alice had reported" {
		t.Fatalf("second answer %q", said(a))
	}
	reqs := srv.Requests("lead")
	last := reqs[len(reqs)-1].Messages
	var sawReport bool
	for _, m := range last {
		if strings.Contains(m.Content, "alice's report") {
			sawReport = true
		}
	}
	if !sawReport {
		t.Fatal("the report was not in the lead's conversation when the person asked")
	}
}

func TestChatInterruptKeepsTheConversationValid(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{{Name: "bash", Args: `{"command":"sleep 30"}`}}},
			{Content: "after the interruption"},
		},
	}, nil)
	srv := fakellm.New(script)
	defer srv.Close()
	tm, events, activity := chatTeamActivity(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chat := tm.StartChat(ctx, true)
	if err := chat.Say("run something slow"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(20 * time.Second)
	for running := false; !running; {
		select {
		case a := <-activity:
			running = a == "lead: running bash"
		case <-timeout:
			t.Fatal("the lead never ran bash")
		}
	}
	start := time.Now()
	if !chat.Interrupt() {
		t.Fatal("Interrupt found no cycle running while bash ran")
	}
	if a := nextAnswer(t, events); !isError(a) || !strings.Contains(said(a), "interrupted") {
		t.Fatalf("answer after interrupt: %+v", a)
	}
	if time.Since(start) > 15*time.Second {
		t.Fatal("the interrupt did not end the bash call")
	}
	if err := chat.Say("carry on"); err != nil {
		t.Fatal(err)
	}
	if a := nextAnswer(t, events); said(a) != "after the interruption" {
		t.Fatalf("answer %+v", a)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("the conversation broke after the interrupt: %v", v)
	}
}
