package linechat

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/event"
)

// session is the person's side of the chat: it reads their lines, gives
// them to the lead one turn at a time (a piped script reads as a dialogue),
// runs slash commands, and shows what the team does as it happens.
type session struct {
	out  *printer
	line func(event.Event) string
	echo bool
	auto bool

	mu       sync.Mutex
	asks     []pendingAsk // permission asks waiting for the person, oldest first
	streamed bool         // the lead's reply of this turn has streamed text
	turns    uint64       // the lead's turns ended so far
	stopped  bool         // the last of them failed or was interrupted
	// changed is signalled (coalesced) by every event and turn's end.
	changed chan struct{}
	// settled, when not nil, is asked before each line is taken: a script
	// waits for the team to be still, as a person reading it would.
	settled func() bool
	// cycled is signalled when the lead's cycle ends (nil: never).
	cycled <-chan struct{}

	// pending are lines read while the lead worked, to be taken in order;
	// eof: the input has ended.
	pending []string
	eof     bool
	// armed: ctrl+c was pressed since the last line; the next one leaves.
	armed bool
	// budgetAsked: the team's budget is reached and the person is asked
	// whether to go on (y or n, once no permission ask waits).
	budgetAsked bool
}

// pendingAsk is a tool call waiting for the person's permission.
type pendingAsk struct{ id, who string }

func newSession(out *printer, line func(event.Event) string) *session {
	return &session{out: out, line: line, changed: make(chan struct{}, 1)}
}

// maxAskDiffLines is how much of a write's diff an ask shows.
const maxAskDiffLines = 20

// event shows one team event; agents' goroutines call it.
func (s *session) event(e event.Event) {
	defer s.signal()
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	stamp := e.Time.Local().Format("15:04:05") + " "
	switch p := e.Payload.(type) {
	case event.Answer:
		if e.Agent == inbox.LeadName {
			s.answer(p)
			return
		}
	case event.Failure:
		if p.Class == event.ClassBudgetAsk {
			s.mu.Lock()
			s.budgetAsked = true
			s.mu.Unlock()
			s.out.line(stamp + p.Text + "\n  answer y (go on with as much again) or n (stop the team)")
			return
		}
		if e.Agent == inbox.LeadName {
			// A lead that failed has ended its turn, and its reply.
			s.replyEnded()
			last := s.line(e)
			if last != "" {
				last = stamp + last
			}
			s.out.endReply(last)
			s.endTurn(true)
			return
		}
	case event.Permission:
		if s.permission(stamp, e, p) {
			return
		}
	}
	if l := s.line(e); l != "" {
		if e.Agent == inbox.LeadName {
			s.out.line(stamp + l) // the lead's own step ends its text so far
		} else {
			s.out.aside(stamp + l) // never cuts a line of the lead's reply
		}
	}
}

// delta shows the lead's reply as it streams; teammates' replies are
// shown by their tool calls and messages.
func (s *session) delta(d llm.Delta) {
	if d.Agent != inbox.LeadName || (d.Content == "" && !d.Restart) {
		return
	}
	s.mu.Lock()
	again := d.Restart && s.streamed
	s.streamed = s.streamed || d.Content != ""
	s.mu.Unlock()
	if again {
		s.out.line("(the reply was cut off; it starts again)")
	}
	s.out.text(d.Content)
}

// answer ends the lead's turn: its reply is already shown when it streamed.
func (s *session) answer(p event.Answer) {
	streamed := s.replyEnded()
	switch {
	case p.Interrupted:
		s.out.endReply("(the lead's turn was interrupted)")
	case !streamed && strings.TrimSpace(p.Text) != "":
		s.out.endReply(strings.TrimRight(p.Text, "\n"))
	default:
		s.out.endReply("")
	}
	s.endTurn(p.Interrupted)
}

// replyEnded reports whether the reply that ended had streamed text.
func (s *session) replyEnded() (streamed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	streamed, s.streamed = s.streamed, false
	return streamed
}

func (s *session) endTurn(stopped bool) {
	s.mu.Lock()
	s.turns++
	s.stopped = stopped
	s.mu.Unlock()
	s.signal()
}

// signal tells a wait that something changed.
func (s *session) signal() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *session) turnCount() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.turns
}

// turnOver reports whether the person's message has had its turn: a lead
// turn ended since before, and it failed, was interrupted or answered it.
func (s *session) turnOver(before uint64, answered func() bool) bool {
	s.mu.Lock()
	n, stopped := s.turns, s.stopped
	s.mu.Unlock()
	return n != before && (stopped || answered())
}

// said counts the person's messages of text in the lead's conversation;
// answered is whether the last of them has an answer after it.
func said(eng engine.Engine, text string) (n int, answered bool) {
	msgs, _ := eng.Conversation(inbox.LeadName)
	for _, m := range msgs {
		switch {
		case m.Role == openai.ChatMessageRoleUser && m.Content == text:
			n, answered = n+1, false
		case m.Role == openai.ChatMessageRoleAssistant:
			answered = true
		}
	}
	return n, answered
}

// permission keeps the asks made of the person and shows each with how to
// answer it; it reports whether it showed the event.
func (s *session) permission(stamp string, e event.Event, p event.Permission) bool {
	if p.RequestID == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Decision != "asked" {
		for i, a := range s.asks {
			if a.id == p.RequestID {
				s.asks = append(s.asks[:i], s.asks[i+1:]...)
				break
			}
		}
		return false
	}
	if p.By != inbox.UserName {
		return false
	}
	s.asks = append(s.asks, pendingAsk{id: p.RequestID, who: e.Agent})
	out := []string{stamp + e.Sentence()}
	if p.Diff != "" {
		diff := strings.Split(strings.TrimRight(p.Diff, "\n"), "\n")
		if len(diff) > maxAskDiffLines {
			diff = append(diff[:maxAskDiffLines], fmt.Sprintf("… %d more lines", len(diff)-maxAskDiffLines))
		}
		for _, l := range diff {
			out = append(out, "  "+l)
		}
	}
	out = append(out, "  answer y (allow once), a (allow always) or n REASON (deny)")
	s.out.line(strings.Join(out, "\n"))
	return true
}

func (s *session) firstAsk() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.asks) == 0 {
		return ""
	}
	return s.asks[0].id
}

// loop talks with the person until the input ends, /quit, a second ctrl+c
// or ctx ends. Lines go one at a time: a message waits for the lead's turn.
func (s *session) loop(ctx context.Context, eng engine.Engine, lines <-chan string, intr <-chan os.Signal) {
	for {
		if len(s.pending) == 0 && s.eof {
			return
		}
		if s.settled != nil && s.wait(ctx, eng, s.settled, lines, intr) {
			return
		}
		if len(s.pending) == 0 && s.eof {
			return
		}
		s.out.showPrompt()
		var l string
		if len(s.pending) > 0 {
			l, s.pending = s.pending[0], s.pending[1:]
		} else {
			select {
			case <-ctx.Done():
				return
			case <-intr:
				if s.armed {
					return
				}
				s.armed = true
				s.out.line("(ctrl+c again leaves)")
				continue
			case got, ok := <-lines:
				if !ok {
					s.eof = true
					continue
				}
				l = got
			}
		}
		s.out.entered(l, s.echo)
		s.armed = false
		if s.handle(ctx, eng, l, lines, intr) {
			return
		}
	}
}

// handle takes one line; it reports whether the person is leaving.
func (s *session) handle(ctx context.Context, eng engine.Engine, l string, lines <-chan string, intr <-chan os.Signal) bool {
	text := strings.TrimSpace(l)
	switch {
	case text == "":
		return false
	case s.answerAsk(ctx, eng, text), s.answerBudget(eng, text):
		return false
	case text == "/init":
		// The lead is asked for AGENTS.md in the person's name: they see what is said.
		text = engine.InitPrompt
		s.out.line(text)
	case strings.HasPrefix(text, "/"):
		return s.command(ctx, eng, text)
	}
	// A turn that ends may be one the lead began before the message came
	// (a teammate's report woke it): the message's own turn is the one
	// after which the conversation holds it, answered.
	earlier, _ := said(eng, text)
	before := s.turnCount()
	if err := eng.Say(text); err != nil {
		s.out.line(err.Error())
		return false
	}
	answered := func() bool { n, ok := said(eng, text); return n > earlier && ok }
	return s.wait(ctx, eng, func() bool { return s.turnOver(before, answered) }, lines, intr)
}

// wait waits until done, asked again at each change: for the end of the
// lead's turn that answers a message, or for a script's team to be still.
// A permission ask can be answered meanwhile, other lines wait their turn.
// It reports whether the person is leaving.
func (s *session) wait(ctx context.Context, eng engine.Engine, done func() bool, lines <-chan string, intr <-chan os.Signal) bool {
	if s.eof {
		lines = nil
	}
	for !done() {
		if s.answerPending(ctx, eng) {
			return true
		}
		select {
		case <-ctx.Done():
			return true
		case <-s.changed:
		case <-s.cycled:
		case <-intr:
			if s.armed {
				return true
			}
			s.armed = true
			if eng.Interrupt() {
				s.out.line("interrupting the lead's turn… (ctrl+c again leaves)")
			} else {
				s.out.line("(ctrl+c again leaves)")
			}
		case l, ok := <-lines:
			if !ok {
				s.eof, lines = true, nil
				continue
			}
			if s.now(ctx, eng, l) {
				return true
			}
		}
	}
	return false
}

// answerPending takes the next line read ahead as the answer to an ask
// that came after it was read (a script's y); at the end of input a
// reached budget is answered no, as nobody is left to say go on. It
// reports whether the person is leaving.
func (s *session) answerPending(ctx context.Context, eng engine.Engine) bool {
	next := len(s.pending) > 0 && isAnswer(s.pending[0])
	if s.eof && !next && s.firstAsk() == "" && s.asked() {
		s.answerBudget(eng, "n")
		return false
	}
	if !next || (s.firstAsk() == "" && !s.asked()) {
		return false
	}
	l := s.pending[0]
	s.pending = s.pending[1:]
	if s.echo {
		s.out.line(prompt + l)
	}
	return s.handle(ctx, eng, l, nil, nil)
}

// isAnswer reports whether a line answers an ask: y, a or n and a reason.
func isAnswer(l string) bool {
	word, _, _ := strings.Cut(strings.TrimSpace(l), " ")
	switch strings.ToLower(word) {
	case "y", "yes", "a", "always", "n", "no":
		return true
	}
	return false
}

// now takes a line read while the lead works: an answer to a permission
// ask (the lead may be waiting for it) and, typed at a terminal, /quit are
// taken at once, the rest in order. It reports whether the person is leaving.
func (s *session) now(ctx context.Context, eng engine.Engine, l string) bool {
	text := strings.TrimSpace(l)
	name, _, _ := strings.Cut(text, " ")
	name = strings.ToLower(name)
	switch name {
	case "y", "yes", "a", "always", "n", "no", "/allow", "/always", "/deny", "/quit", "/exit":
		if name[0] != '/' && s.firstAsk() == "" && !s.asked() {
			break
		}
		if (name == "/quit" || name == "/exit") && (len(s.pending) > 0 || s.settled != nil) {
			break // lines before it were read first, or a script's go in order
		}
		if s.echo {
			s.out.line(prompt + l)
		}
		return s.handle(ctx, eng, l, nil, nil)
	}
	s.pending = append(s.pending, l)
	return false
}

func (s *session) asked() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.budgetAsked
}

// answerBudget takes y and n as the answer to a reached budget, once no
// permission ask waits.
func (s *session) answerBudget(eng engine.Engine, text string) bool {
	if !s.asked() || s.firstAsk() != "" {
		return false
	}
	var goOn bool
	switch strings.ToLower(text) {
	case "y", "yes":
		goOn = true
	case "n", "no":
	default:
		return false
	}
	s.mu.Lock()
	s.budgetAsked = false
	s.mu.Unlock()
	text, err := eng.AnswerBudget(goOn)
	s.show(engine.Reply{Text: text}, err)
	return true
}

// answerAsk takes y, a and n [reason] as the answer to the oldest ask.
func (s *session) answerAsk(ctx context.Context, eng engine.Engine, text string) bool {
	id := s.firstAsk()
	if id == "" {
		return false
	}
	word, reason, _ := strings.Cut(text, " ")
	var call engine.EngineCall
	switch strings.ToLower(word) {
	case "y", "yes":
		call = engine.AnswerCall(id, true, false, "")
	case "a", "always":
		call = engine.AnswerCall(id, true, true, "")
	case "n", "no":
		if reason = strings.TrimSpace(reason); reason == "" {
			reason = "the person said no"
		}
		call = engine.AnswerCall(id, false, false, reason)
	default:
		return false
	}
	s.show(call(ctx, eng))
	return true
}

func (s *session) show(r engine.Reply, err error) {
	if err != nil {
		s.out.line(err.Error())
		return
	}
	if text := strings.TrimRight(r.Text, "\n"); text != "" {
		s.out.aside(text) // never into a line of a reply streaming meanwhile
	}
}
