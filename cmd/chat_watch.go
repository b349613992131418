package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/permask"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/linechat"
	"github.com/agentteam/agentteam/internal/ui/progress"
	"github.com/agentteam/agentteam/internal/ui/tui"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// watchBacklog is how much of the event log a watch shows first: the
// file's last bytes, or a store's last events.
const (
	watchBacklogBytes  = 256 << 10
	watchBacklogEvents = 300
)

// watchInboxes are the inboxes as a watch reads them (each store has a mark).
type watchInboxes interface {
	Names(ctx context.Context) ([]string, error)
	ReadAll(ctx context.Context, name string) ([]inbox.Message, []inbox.BadLine, error)
	Stats(ctx context.Context, name string) (inbox.Stats, error)
	Mark(ctx context.Context, name string) (inbox.Mark, error)
}

// runner names the process that runs the workspace's team, "" when none
// does: the workspace's owner lock, or on a NATS store its lease.
func runner(ctx context.Context, st *launch.Stores, ws *workspace.Workspace) (string, error) {
	if !st.NATS {
		return registry.Runner(ws.TeamDir()), nil
	}
	if h, ok := st.Owner.(interface {
		Holder(context.Context) (string, error)
	}); ok {
		who, err := h.Holder(ctx)
		if err != nil {
			return "", &exit.Error{Code: exit.Failure, Err: err}
		}
		return who, nil
	}
	running, _, err := st.Owner.Running(ctx)
	if err != nil {
		return "", &exit.Error{Code: exit.Failure, Err: err}
	}
	if running {
		return "another agentteam process (on " + st.Where + ")", nil
	}
	return "", nil
}

// watchChat runs chat on a team another process runs (who; "" with
// --watch and nobody running it): the team, its messages and its agents'
// steps as the event log has them, the person's lines to the lead's inbox.
func watchChat(ctx context.Context, opts *ChatOptions, ws *workspace.Workspace, st *launch.Stores, who, lineMode string) error {
	if who == "" {
		who = "no process"
	}
	mail, ok := st.Mail.(watchInboxes)
	if !ok {
		return &exit.Error{Code: exit.Failure, Err: errors.New("this store's inboxes cannot be watched")}
	}
	follow, err := followEvents(ctx, st, ws)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	events := st.Events(ws, nil)
	ws2 := watchStores(opts, ws, st, mail, events, who)
	running := func(ctx context.Context) bool {
		r, err := runner(ctx, st, ws)
		return err == nil && r != ""
	}
	notice := fmt.Sprintf("Watching: %s runs this team. Your lines go to the lead's inbox (it reads them at its next turn); /send, /inbox, /team, /tasks and the asks' answers work here, the rest is done where the team runs.", who)
	if lineMode != "" {
		return watchLines(ctx, opts, ws2, follow, running, notice)
	}
	in, _ := opts.IO.In.(*os.File)
	out, _ := opts.IO.Out.(*os.File)
	return tui.Watch(ctx, tui.WatchConfig{
		Engine:   engine.NewWatchEngine(ws2),
		Mail:     mail,
		Registry: st.Registry,
		Events:   follow,
		Running:  running,
		Screen:   tui.Options{Workspace: ws.Root, ModelName: "watching", Notice: notice, KeyEnv: opts.APIKeyEnv(), Watch: who, Sandbox: "sandbox: where the team runs"},
		In:       in,
		Out:      out,
	})
}

// followEvents follows the team's event log from its last events.
func followEvents(ctx context.Context, st *launch.Stores, ws *workspace.Workspace) (*event.EventFollower, error) {
	lines, ok := st.Lines.(*natsstore.EventLog)
	if !ok {
		return event.FollowEventFile(ws.EventsPath(), watchBacklogBytes), nil
	}
	read, err := lines.Follow(ctx, watchBacklogEvents)
	if err != nil {
		return nil, err
	}
	return event.FollowEventLines(read), nil
}

// watchStores are the watch's ways to the team, as agentteam send and
// approve take them.
func watchStores(opts *ChatOptions, ws *workspace.Workspace, st *launch.Stores, mail watchInboxes, events *event.EventLog, who string) engine.WatchStores {
	return engine.WatchStores{
		Mail:     mail,
		Registry: st.Registry,
		Board:    st.Board,
		Runner:   who,
		Send: func(ctx context.Context, to, content string) error {
			if n := len(content); n > inbox.MaxContentBytes {
				return fmt.Errorf("the message is %d bytes, over the limit of %d (256 KiB)", n, inbox.MaxContentBytes)
			}
			if !st.NATS {
				if err := ws.Init(); err != nil { // this user's state, as agentteam send makes it
					return err
				}
			}
			m, err := st.Mail.Append(ctx, to, inbox.Message{Type: inbox.TypeMessage, From: inbox.UserName, To: to, Content: content})
			if err != nil {
				return err
			}
			events.Emit(event.Event{Payload: event.Delivered(m)})
			return nil
		},
		Answer: func(ctx context.Context, id string, approve, always bool, reason string) (string, error) {
			a, _, err := permask.Answer(ctx, opts.GlobalOptions, ws, st, id, approve, always, reason, time.Now())
			if err != nil {
				return "", err
			}
			if approve {
				return fmt.Sprintf("allowed %s's %s (request %s)", a.Agent, a.Tool, a.RequestID), nil
			}
			return fmt.Sprintf("denied %s's %s (request %s)", a.Agent, a.Tool, a.RequestID), nil
		},
	}
}

// watchLines is a watch in lines: each event as run prints it, the lead's
// replies whole; a line goes to the lead's inbox, a slash command is the
// chats' own (/send, /team, /inbox, /tasks, /allow, /always, /deny…) run
// against the watch, which refuses what only the running process does;
// /quit or the end of input leaves.
func watchLines(ctx context.Context, opts *ChatOptions, s engine.WatchStores, follow *event.EventFollower, running func(context.Context) bool, notice string) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	w := &watchLog{out: opts.IO.Out}
	w.println("agentteam chat in lines, watching")
	w.println(notice)
	eng := engine.NewWatchEngine(s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		engine.Follow(ctx, follow, running, w.event, func(text string, isErr bool) {
			if isErr {
				text = "! " + text
			}
			w.println(text)
		})
	}()
	lines := make(chan string)
	go func() {
		if err := linechat.ReadLines(ctx, opts.IO.In, lines); err != nil {
			w.println("! " + err.Error())
		}
	}()
	defer func() { stop(); <-done }()
	for {
		select {
		case <-ctx.Done():
			return nil
		case line, ok := <-lines:
			if !ok || w.do(ctx, eng, strings.TrimSpace(line)) {
				return nil
			}
		}
	}
}

// watchLog is a watch in lines: what it prints, and the asks for the
// person that wait (the oldest is what /allow answers without an id).
type watchLog struct {
	mu  sync.Mutex
	out io.Writer
	// lastReply is the lead's last reply shown: a chat's answer repeats
	// it (a run or an MCP client's team_run has replies and no answers).
	lastReply string
	asks      []string
}

func (w *watchLog) println(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	fmt.Fprintln(w.out, strings.TrimRight(text, "\n"))
}

// do is one line the person typed; quit says it was /quit.
func (w *watchLog) do(ctx context.Context, eng engine.Engine, line string) (quit bool) {
	if line == "" {
		return false
	}
	if !strings.HasPrefix(line, "/") {
		if err := eng.Say(line); err != nil {
			w.println("! " + err.Error())
		} else {
			w.println("sent to the lead's inbox")
		}
		return false
	}
	w.mu.Lock()
	first := ""
	if len(w.asks) > 0 {
		first = w.asks[0]
	}
	w.mu.Unlock()
	name, call, err := engine.EngineCommand(line, "", first)
	switch {
	case err != nil:
		w.println("! " + err.Error())
	case call != nil:
		r, err := call(ctx, eng)
		if err != nil {
			w.println("! " + err.Error())
		} else if r.Text != "" {
			w.println(r.Text)
		}
	case name == "/quit" || name == "/exit":
		return true
	default:
		w.println(fmt.Sprintf("! %s is not a command of a watching chat: /send, /inbox, /team, /tasks, /allow, /always, /deny and /quit are", name))
	}
	return false
}

// event prints one event of the log.
func (w *watchLog) event(e event.Event) {
	if p, ok := e.Payload.(event.Permission); ok && p.RequestID != "" && p.By == inbox.UserName {
		w.mu.Lock()
		w.asks = slices.DeleteFunc(w.asks, func(id string) bool { return id == p.RequestID })
		if p.Decision == "asked" {
			w.asks = append(w.asks, p.RequestID)
		}
		w.mu.Unlock()
	}
	if line := w.line(e); line != "" {
		w.println(line)
	}
}

// line is one event in a watch's lines: run's progress line, the lead's
// replies and the person's prompts whole.
func (w *watchLog) line(e event.Event) string {
	switch p := e.Payload.(type) {
	case event.Reply:
		if e.Agent == inbox.LeadName && strings.TrimSpace(p.Text) != "" {
			w.lastReply = p.Text
			return "lead: " + p.Text
		}
	case event.Answer:
		switch {
		case p.Interrupted:
			return e.Sentence()
		case p.Text != "" && p.Text != w.lastReply:
			return "lead: " + p.Text
		}
	case event.Prompt:
		return "the person → lead: " + p.Text
	case event.Permission:
		if p.Decision == "asked" && p.By == inbox.UserName {
			return e.Sentence() + ": answer with /allow " + p.RequestID + " or /deny " + p.RequestID + " REASON"
		}
	}
	return progress.Line(e)
}

// watchIfRunning watches the team when another process runs it or
// --watch says so; watched says it did (and the chat is over).
func watchIfRunning(ctx context.Context, opts *ChatOptions, ws *workspace.Workspace, lineMode string) (watched bool, err error) {
	if opts.Resume {
		return false, nil // --resume continues a team this process runs, or says who runs it
	}
	st, err := launch.OpenStoresAs(ctx, opts.GlobalOptions, ws, natsconn.RolePerson)
	if err != nil {
		return false, err
	}
	defer st.Close()
	who, err := runner(ctx, st, ws)
	if err != nil || (who == "" && !opts.Watch) {
		return false, err
	}
	return true, watchChat(ctx, opts, ws, st, who, lineMode)
}
