// Package linechat is `agentteam chat` for a terminal that cannot run the
// full-screen TUI (TERM=dumb, no TERM, a pipe, --plain): a prompt, the
// lead's reply streamed as plain text, one line per tool call and team
// event, permission asks answered with y, a or n, and the TUI's slash
// commands that make sense in lines. It drives the team through the TUI's
// Engine and runs the TUI's own commands (engine.EngineCommand); it writes no
// escape sequence at all.
package linechat

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/muesli/cancelreader"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
)

// Config is what Run needs besides the Chat made by New.
type Config struct {
	// Team is opened by Run; its OnEvent and OnDelta are set to the chat.
	Team team.Options
	// HasModel is false without a key: the lead cannot answer, commands work.
	HasModel bool
	Auto     bool
	// Notice is the first line (a welcome, or how to set a key).
	Notice string
	In     io.Reader
	// Echo writes each line read after the prompt: no terminal echoes it
	// into this output (the input or the output is a pipe), and the
	// transcript should read as a dialogue.
	Echo bool
	// Script: the input is not a terminal. Each line waits until the team
	// is still (the lead answered, no teammate works), as a person reading
	// the replies would, so a script's commands see what came before them.
	Script bool
	// Interrupts are the person's ctrl+c presses: the first interrupts the
	// lead's turn, the second leaves. nil: there are none.
	Interrupts <-chan os.Signal
}

// Chat is one line-mode chat. Make it before the model client, whose
// OnRetry is its Retry, then Run it.
type Chat struct {
	s    *session
	team atomic.Pointer[team.Team]
}

// New makes a chat that writes to out; line is the sentence a team event
// is shown with ("" hides it), the one `agentteam run` prints.
func New(out io.Writer, line func(event.Event) string) *Chat {
	return &Chat{s: newSession(&printer{w: out}, line)}
}

// Retry is the model client's OnRetry: to events.jsonl once the team is
// open (it comes back as an event), else straight to the output.
func (c *Chat) Retry(r llm.Retry) {
	e := event.RetryEvent(r)
	if t := c.team.Load(); t != nil {
		t.Emit(e)
		return
	}
	c.s.event(e)
}

// maxLine bounds one line of input.
const maxLine = 1 << 20

// Run opens the team and talks with the person until the input ends,
// /quit or a second ctrl+c; then it stops the teammates and closes the team.
func (c *Chat) Run(ctx context.Context, cfg Config) error {
	s := c.s
	s.echo = cfg.Echo
	s.auto = cfg.Auto
	cfg.Team.OnEvent = s.event
	cfg.Team.OnDelta = s.delta
	tm, err := team.Open(ctx, cfg.Team)
	if err != nil {
		return err
	}
	c.team.Store(tm)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var chat *team.Chat
	if cfg.HasModel {
		chat = tm.StartChat(runCtx, cfg.Auto)
		if cfg.Script {
			s.settled, s.cycled = chat.Settled, chat.CycleEnded()
		}
	}
	if cfg.Notice != "" {
		s.out.line(cfg.Notice)
	}
	s.out.line("/help lists the commands; ctrl+d (end of input) or /quit leaves.")

	in := cancellable(cfg.In)
	lines := make(chan string)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := ReadLines(runCtx, in, lines); err != nil {
			s.out.line(err.Error())
		}
	}()

	s.loop(runCtx, engine.NewEngine(tm, chat), lines, cfg.Interrupts)
	s.out.leave()
	cancel()
	if in.Cancel() {
		wg.Wait()
		in.Close() // not before the read has returned: closing wakes no blocked read
	} // else a read that cannot be cancelled ends with the process
	if chat != nil {
		<-chat.Done()
	}
	tm.ShutdownAll("the person quit")
	closing, stop := context.WithTimeout(context.WithoutCancel(ctx), team.CloseTimeout)
	defer stop()
	return tm.Close(closing)
}

// cancellable wraps in so that a read blocked on it can be ended.
func cancellable(in io.Reader) cancelreader.CancelReader {
	if cr, err := cancelreader.NewReader(in); err == nil {
		return cr
	}
	// A regular file cannot be waited on, and a read of one never blocks.
	return fileReader{in}
}

// fileReader is a reader whose reads end by themselves.
type fileReader struct{ io.Reader }

func (fileReader) Cancel() bool { return true }
func (fileReader) Close() error { return nil }

// ReadLines sends each line of r until its end or ctx's, then closes out.
func ReadLines(ctx context.Context, r io.Reader, out chan<- string) error {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for sc.Scan() {
		select {
		case out <- sc.Text():
		case <-ctx.Done():
			return nil
		}
	}
	switch err := sc.Err(); {
	case err == nil, errors.Is(err, cancelreader.ErrCanceled), ctx.Err() != nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("a line of more than %d bytes ends the input", maxLine)
	default:
		return fmt.Errorf("the input cannot be read: %w", err)
	}
}
