package tui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/atpath"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/internal/ui/tui/panel"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
	"github.com/agentteam/agentteam/team"
)

// Options describe what the screen shows besides the team.
type Options struct {
	ModelName  string
	Workspace  string
	MaxWorkers int
	Auto       bool
	// HasModel is false when no key was given: the lead cannot answer, the rest works.
	HasModel bool
	// Notice is the first message on the screen (how to set a key, say).
	Notice string
	// KeyEnv names the variable the API key is read from ("" is OPENAI_API_KEY).
	KeyEnv string
	// Sandbox is how commands are confined, for the status line:
	// "sandbox: on" or "sandbox: off (reason)".
	Sandbox string
	// LightBackground picks the light markdown style.
	LightBackground bool
	// Colour: the terminal shows colours and the markdown is styled; false
	// (NO_COLOR, CI, a dumb terminal) keeps it plain, emphasis markers as written.
	Colour bool
	// ModelLabels are the configured models, for completing /model.
	ModelLabels []string
	// Mouse starts with the mouse captured (the wheel scrolls); off, the terminal selects text.
	Mouse bool
	// Watch, when set, says who runs the team this screen watches (Watch):
	// the person's lines go to the lead's inbox, the lead is not waited on.
	Watch string
	// WorkerID is this process's id as a worker of a team across hosts: a
	// teammate another worker runs shows where ("" on one host).
	WorkerID string
}

// noteMsg is a command's output or a failed job, for the conversation.
type noteMsg struct {
	text  string
	isErr bool
	// toLead shows the note in the lead's pane even while a teammate is focused.
	toLead bool
}

// hintMsg is a short confirmation for the help bar.
type hintMsg string

// Model is the one root model of the TUI. Update only changes state (IO
// runs in jobs handed to do); View only renders. What it shows and takes
// is its components': the panes (convPane, mateView, panel.Team and
// Feed), the input and its pop-up, the screen's layout (screen), the
// asks (asker), the engine's events (eventSink), the person's commands
// and messages (commander); it keeps the focus, the keys and the notes.
type Model struct {
	ctx  context.Context
	eng  engine.Engine
	do   func(job func() tea.Msg)
	opts Options
	st   draw.Styles
	r    *renderer

	// act puts what the person typed to work: slash commands, messages (run_command.go).
	act commander
	// pop is the completion pop-up (popup.go).
	pop popup
	// scr is the screen: its size, its layout and its lines (view.go).
	scr screen

	lead *convPane
	mate *mateView // the focused teammate's conversation; nil when the lead is focused
	// sessions are the lead's earlier conversations /sessions last listed (sessions.go).
	sessions sessionList
	team     *panel.Team
	feed     panel.Feed
	in       input

	focus    string // "" is the lead
	auto     bool
	leadBusy bool
	lastErr  string
	tokens   int
	cost     *float64 // the team's, from the registry; nil unknown
	hint     string
	quitting bool
	// plans are the plan requests shown and not yet answered (plan.go).
	plans planBoard
	// ask is what waits for the person's answer: tool calls' permissions, a reached budget (permission.go).
	ask asker
	// writes are the diffs of writes, for their entries (writes.go).
	writes writeDiffs
	// ev takes the engine's events into the panes (apply.go).
	ev eventSink
	// instructions name each agent's AGENTS.md files ("AGENTS.md ×2"), for the status line.
	instructions map[string]string
	// prog is the work under way: spinner, times, context sizes (panel).
	prog panel.Progress
	// mouse: the mouse is captured (/mouse); cmds are commands for the
	// program that update asked for, returned by Update.
	mouse bool
	cmds  []tea.Cmd
	// mcp is the MCP servers' states, as last polled (mcp.go).
	mcp mcpState
	// search is ctrl+r's history search (histsearch.go).
	search histSearch
	// chord: ctrl+x was pressed, the first key of ctrl+x ctrl+e.
	chord bool
	// focused: the terminal said it has the person's focus (and no bell
	// rings for what waits for them).
	focused bool
}

// New builds the model. do runs a job off the Update goroutine, in order,
// and delivers its message back to Update.
func New(ctx context.Context, opts Options, eng engine.Engine, do func(job func() tea.Msg)) *Model {
	root := opts.Workspace
	opts.Workspace = shortPath(opts.Workspace)
	if opts.MaxWorkers <= 0 {
		opts.MaxWorkers = team.DefaultMaxWorkers
	}
	st := draw.NewStyles()
	m := &Model{
		ctx: ctx, eng: eng, do: do, opts: opts, st: st,
		r:    &renderer{st: st, md: &draw.Markdown{Light: opts.LightBackground, Colour: opts.Colour}},
		lead: newConvPane(), team: panel.NewTeam(opts.MaxWorkers), in: newInput(root, opts.LightBackground),
		auto:         opts.Auto,
		instructions: map[string]string{}, prog: panel.NewProgress(), mouse: opts.Mouse,
	}
	m.team.Prog, m.team.Self = &m.prog, opts.WorkerID
	// The components that need the root to read the team or run jobs.
	m.scr, m.act, m.ask = screen{m: m}, commander{m: m}, asker{m: m}
	m.ev = eventSink{m: m, agents: map[string]bool{}}
	m.pop = popup{m: m, sel: -1}
	m.plans = planBoard{m: m, open: map[string]*entry{}}
	if opts.HasModel {
		m.team.LeadModel = opts.ModelName
	}
	if opts.Notice != "" {
		m.lead.add(&entry{kind: entryNote, text: opts.Notice})
	}
	m.setPlaceholder()
	m.do(func() tea.Msg {
		msgs, _ := eng.Conversation(inbox.LeadName)
		return historyMsg{msgs: msgs}
	})
	return m
}

// Init starts the cursor blinking.
func (m *Model) Init() tea.Cmd { return textarea.Blink }

// Quitting reports whether the person asked to leave.
func (m *Model) Quitting() bool { return m.quitting }

// update changes the state for one message (Update, in progress.go, wraps it).
func (m *Model) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.scr.w, m.scr.h = msg.Width, msg.Height
		m.in.setWidth(m.scr.w)
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		m.paste(msg.Content)
		return m, nil
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.scroll(-3)
		case tea.MouseWheelDown:
			m.scroll(3)
		}
		return m, nil
	case tea.FocusMsg:
		m.focused = true
	case tea.BlurMsg:
		m.focused = false
	case bridge.Batch:
		m.ev.apply(msg)
	case poll.Snapshot:
		m.snapshot(msg)
	case poll.MCP:
		m.mcp.changed(msg.Servers, m.lead)
	case poll.Feed:
		m.feed.Add(msg.Msgs)
	case convMsg:
		if m.mate != nil && msg.name == m.mate.name {
			m.mate.update(msg.msgs, msg.ok)
			if m.mate.stale {
				m.mate.stale = false
				m.refreshMate()
			}
		}
	case branchMsg:
		m.mate.branchDiff(m, msg)
	case historyMsg:
		m.lead.restore(msg.msgs)
	case sessionSwitchedMsg:
		m.sessions.keep(msg.list)
		m.lead.switched(msg)
	case sessionsListedMsg:
		m.sessions.keep(msg.list)
		m.note(noteMsg{text: msg.text})
	case noteMsg:
		m.note(msg)
	case hintMsg:
		m.hint = string(msg)
	case atpath.ListedMsg:
		m.in.paths.Store(msg)
	case attachedMsg:
		m.lead.attached(msg)
	case editorMsg:
		m.hint = m.in.edited(msg)
	case modelMsg:
		m.opts.ModelName, m.team.LeadModel = string(msg), string(msg)
		m.hint = "the lead talks to " + string(msg) + " from its next turn"
	default:
		// The cursor's blink and the like belong to the input.
		var cmd tea.Cmd
		m.in.ta, cmd = m.in.ta.Update(msg)
		return m, cmd
	}
	return m, nil
}

// handleKey handles one key press the completion pop-up left (popup.go).
func (m *Model) handleKey(k tea.KeyPressMsg) tea.Cmd {
	if ks := k.String(); ks != "tab" && ks != "shift+tab" {
		m.hint = ""
	}
	if hint, took := m.search.key(k, &m.in); took {
		m.hint = hint
		return nil
	}
	if m.ask.key(k) {
		return nil
	}
	// ctrl+x ctrl+e opens the input in the person's editor, as in bash.
	if chord := m.chord; chord {
		m.chord = false
		if k.String() == "ctrl+e" {
			cmd, hint := m.in.edit()
			if hint != "" {
				m.hint = hint
			}
			return cmd
		}
	}
	switch k.String() {
	case "ctrl+r":
		m.hint = m.search.start(&m.in)
		return nil
	case "ctrl+x":
		m.chord = true
		m.hint = "ctrl+x: ctrl+e opens the input in your editor"
		return nil
	case "ctrl+c":
		m.quitting = true
		return tea.Quit
	case "esc":
		switch {
		case m.scr.help:
			m.scr.help = false
		case m.focus == "" && m.leadBusy:
			if m.eng.Interrupt() {
				m.hint = interruptingHint
			}
		case m.focus != "":
			m.setFocus("")
		}
		return nil
	case "enter":
		m.act.submit()
		if m.quitting {
			return tea.Quit
		}
		return nil
	case "tab", "shift+tab":
		if k.String() == "tab" && m.pop.tab() {
			return nil
		}
		step := 1
		if k.String() == "shift+tab" {
			step = -1
		}
		m.cycleFocus(step)
		return nil
	case "up":
		if m.in.onFirstLine() && m.in.older() {
			return nil
		}
	case "down":
		if m.in.onLastLine() && m.in.newer() {
			return nil
		}
	}
	if m.scr.key(k) {
		return nil
	}
	var cmd tea.Cmd
	m.in.ta, cmd = m.in.ta.Update(k)
	return cmd
}

// pane is the conversation on screen.
func (m *Model) pane() *convPane {
	if m.mate != nil {
		return m.mate.pane
	}
	return m.lead
}

func (m *Model) scroll(n int) { m.pane().scroll(m.r, m.scr.convWidth(), m.scr.convHeight(), n) }

// note shows a command's output or a job's failure.
func (m *Model) note(n noteMsg) {
	kind := entryNote
	if n.isErr {
		kind = entryError
		if n.toLead {
			m.leadIdle()
		}
	}
	p := m.lead
	if m.mate != nil && !n.toLead {
		p = m.mate.pane
	}
	p.add(&entry{kind: kind, text: n.text})
	p.toEnd()
}

// cycleFocus moves the focus step places along lead, teammates…
func (m *Model) cycleFocus(step int) {
	names := m.team.Names()
	cur := 0
	for i, n := range names {
		if n == m.focus {
			cur = i
		}
	}
	next := ((cur+step)%len(names) + len(names)) % len(names)
	m.setFocus(names[next])
}

// setFocus shows an agent's conversation; "" is the lead.
func (m *Model) setFocus(name string) {
	if name == inbox.LeadName {
		name = ""
	}
	m.focus = name
	m.team.Focus = name
	m.scr.help = false
	if name == "" {
		m.mate = nil
	} else {
		m.mate = newMateView(name, func(args string) (shownDiff, bool) { return m.writes.lookup(name, args) })
		m.refreshMate()
		m.mate.refreshBranch(m)
	}
	m.setPlaceholder()
}

func (m *Model) setPlaceholder() {
	if m.focus != "" {
		m.in.ta.Placeholder = fmt.Sprintf("Message to %s's inbox… (esc: back to the lead)", m.focus)
		return
	}
	m.in.ta.Placeholder = "Talk to the lead… (/help for commands, ? for keys)"
}

// refreshMate reads the focused teammate's conversation in a job.
func (m *Model) refreshMate() {
	if m.mate == nil || m.mate.loading {
		if m.mate != nil {
			m.mate.stale = true
		}
		return
	}
	name := m.mate.name
	m.mate.loading = true
	m.do(func() tea.Msg {
		msgs, ok := m.eng.Conversation(name)
		return convMsg{name: name, msgs: msgs, ok: ok}
	})
}

// snapshot takes the registry and inbox counts the poller read.
func (m *Model) snapshot(s poll.Snapshot) {
	m.team.Members = s.Config.Teammates
	m.team.State = s.Config.State
	m.team.Unread = s.Unread
	m.team.LeadTokens = s.LeadTokens
	m.team.Lead = s.Config.Lead
	m.cost = s.Config.Usage().Total.Cost
	total := s.LeadTokens
	for _, mb := range s.Config.Teammates {
		total += mb.Tokens
	}
	m.tokens = total
	m.mate.branchFromSnapshot(m)
}
