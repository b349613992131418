package linechat

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// fakeEngine records what the session asks of the team; the methods it
// does not override are the nil interface's (a call would panic).
type fakeEngine struct {
	engine.Engine
	said        chan string
	interrupted chan struct{}
	mu          sync.Mutex
	answers     []string
	conv        []openai.ChatCompletionMessage
	late        bool // what is said is answered only by answerLate
}

func (f *fakeEngine) answerLate() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.conv = append(f.conv, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "answered late"})
}

func newFakeEngine() *fakeEngine {
	return &fakeEngine{said: make(chan string, 10), interrupted: make(chan struct{}, 10)}
}

func (f *fakeEngine) Say(text string) error {
	f.mu.Lock()
	f.conv = append(f.conv, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: text})
	if !f.late {
		f.conv = append(f.conv, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "answered"})
	}
	f.mu.Unlock()
	f.said <- text
	return nil
}

// Conversation: every message said is answered (the turn's end is the test's).
func (f *fakeEngine) Conversation(string) ([]openai.ChatCompletionMessage, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]openai.ChatCompletionMessage(nil), f.conv...), true
}

func (f *fakeEngine) Interrupt() bool { f.interrupted <- struct{}{}; return true }

func (f *fakeEngine) Compact() (string, error) { return "compacted", nil }

func (f *fakeEngine) Usage() registry.TeamUsage { return registry.TeamUsage{} }

func (f *fakeEngine) AllowForSession(_ context.Context, id string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, id+"|session")
	return "allowed " + id + " for the session", nil
}

func (f *fakeEngine) AnswerPermission(_ context.Context, id string, approve, always bool, reason string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, strings.Join([]string{id, bool01(approve), bool01(always), reason}, "|"))
	return "answered " + id, nil
}

func bool01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// newTestSession writes to out, which is read under the printer's lock
// (output) when agents may be writing.
func newTestSession() (*session, *bytes.Buffer) {
	out := &bytes.Buffer{}
	return newSession(&printer{w: out}, func(e event.Event) string { return e.Sentence() }), out
}

func (s *session) output() string {
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	return s.out.w.(*bytes.Buffer).String()
}

func ask(id string) event.Event {
	return event.Event{Agent: "alice", Payload: event.Permission{Tool: "bash", Subject: "rm -rf build", Decision: "asked", By: "user", RequestID: id}}
}

func TestNothingTheModelWritesReachesTheTerminalAsAnEscape(t *testing.T) {
	s, out := newTestSession()
	s.delta(llm.Delta{Agent: "lead", Content: "red \x1b[31malert\x1b[0m and \u009b2J and a bell\a\r\n"})
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "not shown again"}})
	s.event(event.Event{Agent: "al\x1b]52;c;aGk=\ace", Payload: event.Answer{Text: "x"}})
	got := out.String()
	if strings.ContainsAny(got, "\x1b\u009b\a\r") {
		t.Fatalf("a control character was written: %q", got)
	}
	if !strings.Contains(got, "red ?[31malert?[0m and ?2J and a bell?\n") {
		t.Fatalf("the streamed text is not shown as written: %q", got)
	}
	if strings.Contains(got, "not shown again") {
		t.Fatalf("a streamed reply was printed twice: %q", got)
	}
}

func TestAReplyNotStreamedIsPrintedWhole(t *testing.T) {
	s, out := newTestSession()
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "the whole answer\n"}})
	if got := out.String(); got != "the whole answer\n" {
		t.Fatalf("output %q", got)
	}
}

func TestAnAskIsAnsweredByTypingYANOrN(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"y", "req-1|1|0|"},
		{"Yes", "req-1|1|0|"},
		{"a", "req-1|1|1|"},
		{"n not in this repo", "req-1|0|0|not in this repo"},
		{"n", "req-1|0|0|the person said no"},
		{"/deny req-1 too risky", "req-1|0|0|too risky"},
		{"/allow", "req-1|1|0|"},
	} {
		s, out := newTestSession()
		eng := newFakeEngine()
		s.event(ask("req-1"))
		if !strings.Contains(out.String(), "answer y (allow once), a (allow always) or n REASON (deny)") {
			t.Fatalf("the ask does not say how to answer: %q", out.String())
		}
		if s.handle(context.Background(), eng, c.line, nil, nil) {
			t.Fatalf("%q: the session left", c.line)
		}
		if len(eng.answers) != 1 || eng.answers[0] != c.want {
			t.Errorf("%q answered %v, want %q", c.line, eng.answers, c.want)
		}
		if len(eng.said) != 0 {
			t.Errorf("%q went to the lead as a message", c.line)
		}
	}
}

func TestWithNoAskYIsAMessageToTheLead(t *testing.T) {
	s, _ := newTestSession()
	eng := newFakeEngine()
	s.event(ask("req-1"))
	s.event(event.Event{Agent: "alice", Payload: event.Permission{Tool: "bash", Decision: "allowed", By: "user", RequestID: "req-1"}})
	left := make(chan bool)
	go func() { left <- s.handle(context.Background(), eng, "y", nil, nil) }()
	if got := <-eng.said; got != "y" || len(eng.answers) != 0 {
		t.Fatalf("said %q, answers %v", got, eng.answers)
	}
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "hi"}}) // ends the turn the message started
	if <-left {
		t.Fatal("the session left")
	}
}

// running is a session's loop run on channels the test writes to.
type running struct {
	s     *session
	eng   *fakeEngine
	lines chan string
	intr  chan os.Signal
	done  chan struct{}
}

// startLoop runs a session's loop until it returns.
func startLoop(t *testing.T) *running {
	t.Helper()
	s, _ := newTestSession()
	r := &running{s: s, eng: newFakeEngine(), lines: make(chan string), intr: make(chan os.Signal), done: make(chan struct{})}
	go func() { defer close(r.done); s.loop(context.Background(), r.eng, r.lines, r.intr) }()
	t.Cleanup(func() {
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
			t.Error("the loop did not end")
		}
	})
	return r
}

func TestALineWaitsForTheLeadsTurnButAnAnswerToAnAskDoesNot(t *testing.T) {
	r := startLoop(t)
	s, eng, lines, done := r.s, r.eng, r.lines, r.done
	lines <- "first"
	if got := <-eng.said; got != "first" {
		t.Fatalf("said %q", got)
	}
	lines <- "second" // read while the lead works: it waits
	s.event(ask("req-1"))
	lines <- "y"     // taken at once: the lead may be waiting for it
	lines <- "/help" // taken once y has been answered
	eng.mu.Lock()
	answers := eng.answers
	eng.mu.Unlock()
	if len(answers) != 1 {
		t.Fatalf("the ask was not answered while the lead worked: %v", answers)
	}
	select {
	case got := <-eng.said:
		t.Fatalf("%q was said before the lead's turn ended", got)
	default:
	}
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "done"}})
	if got := <-eng.said; got != "second" {
		t.Fatalf("after the turn said %q, want second", got)
	}
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "done again"}})
	close(lines)
	<-done
}

func TestCtrlCInterruptsTheTurnAndASecondLeaves(t *testing.T) {
	r := startLoop(t)
	s, eng, lines, intr, done := r.s, r.eng, r.lines, r.intr, r.done
	lines <- "take your time"
	<-eng.said
	intr <- os.Interrupt
	<-eng.interrupted
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Interrupted: true}})
	intr <- os.Interrupt
	<-done
	if got := s.output(); !strings.Contains(got, "interrupting the lead's turn") || !strings.Contains(got, "(the lead's turn was interrupted)") {
		t.Fatalf("output %q", got)
	}
}

func TestCtrlCAtThePromptAsksForASecond(t *testing.T) {
	r := startLoop(t)
	s, lines, intr, done := r.s, r.lines, r.intr, r.done
	intr <- os.Interrupt
	lines <- "" // a line disarms
	intr <- os.Interrupt
	select {
	case <-done:
		t.Fatalf("one ctrl+c after a line left the chat: %q", s.output())
	default:
	}
	intr <- os.Interrupt
	<-done
	if n := strings.Count(s.output(), "(ctrl+c again leaves)"); n != 2 {
		t.Fatalf("the hint was shown %d times: %q", n, s.output())
	}
}

// A turn the lead began before the message came (a teammate's report woke
// it) ends without answering it: the next line still waits for the answer.
func TestATurnThatDidNotTakeTheMessageDoesNotEndTheWait(t *testing.T) {
	r := startLoop(t)
	s, eng, lines, done := r.s, r.eng, r.lines, r.done
	eng.mu.Lock()
	eng.late = true
	eng.mu.Unlock()
	lines <- "first"
	<-eng.said
	lines <- "second"
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "about the report"}})
	lines <- "third" // read by the same wait: the answer above did not end it
	select {
	case got := <-eng.said:
		t.Fatalf("%q was said before the first message was answered", got)
	default:
	}
	eng.answerLate()
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "about first"}})
	if got := <-eng.said; got != "second" {
		t.Fatalf("said %q, want second", got)
	}
	eng.mu.Lock()
	eng.late = false
	eng.mu.Unlock()
	eng.answerLate()
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "about second"}})
	<-eng.said // third, answered at once
	s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "about third"}})
	close(lines)
	<-done
}

// /init says the fixed prompt to the lead, and prints it.
func TestInitSaysThePromptToTheLead(t *testing.T) {
	r := startLoop(t)
	r.lines <- "/init"
	if got := <-r.eng.said; got != engine.InitPrompt {
		t.Fatalf("said %q", got)
	}
	r.s.event(event.Event{Agent: "lead", Payload: event.Answer{Text: "wrote AGENTS.md"}})
	close(r.lines)
	<-r.done
	if got := r.s.output(); !strings.Contains(got, "Write an AGENTS.md file at the root of this project") {
		t.Fatalf("output %q", got)
	}
}
