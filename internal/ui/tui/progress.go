package tui

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/workspace"
)

// tickMsg moves the spinner on; ticks run only while an agent works.
type tickMsg time.Time

// tickInterval is the spinner's frame time.
const tickInterval = 120 * time.Millisecond

// spinFrames are the spinner's frames, one cell each.
var spinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// progress is what the screen knows of work under way: when each working
// agent began, the spinner's frame, and each agent's context size.
type progress struct {
	now     func() time.Time // the clock; tests set their own
	frame   int
	ticking bool                 // a tick is on its way
	since   map[string]time.Time // working agents ("lead" too) and when they began
	context map[string]int       // tokens of each agent's last model call: its context's size then
}

func newProgress() progress {
	return progress{now: time.Now, since: map[string]time.Time{}, context: map[string]int{}}
}

// spinner is the current frame.
func (p *progress) spinner() string { return spinFrames[p.frame%len(spinFrames)] }

// elapsed is how long name has worked, short ("7s", "2m05s"); "" when it does not.
func (p *progress) elapsed(name string) string {
	start, ok := p.since[name]
	if !ok {
		return ""
	}
	return shortDuration(p.now().Sub(start))
}

// working says "⠋ 12s" for a working agent, "" otherwise.
func (p *progress) working(name string) string {
	e := p.elapsed(name)
	if e == "" {
		return ""
	}
	return p.spinner() + " " + e
}

func shortDuration(d time.Duration) string {
	s := int(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}

// Update changes the state for one message, then keeps the progress in
// step: who works since when, each agent's context size, and a tick on its
// way while anybody works.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if _, ok := msg.(tickMsg); ok {
		m.prog.ticking = false
		m.prog.frame++
		m.track()
		return m, m.tick()
	}
	_, cmd := m.update(msg)
	if b, ok := msg.(batchMsg); ok {
		m.contextFrom(b)
	}
	m.track()
	cmds := append(m.cmds, cmd, m.tick())
	m.cmds = nil
	return m, tea.Batch(cmds...)
}

// track notes when the lead and each teammate began working, and forgets
// those that stopped. It runs on every message, so it allocates nothing.
func (m *Model) track() {
	for name := range m.prog.since {
		if !m.busy(name) {
			delete(m.prog.since, name)
		}
	}
	if m.leadBusy {
		m.prog.begin(workspace.LeadName)
	}
	for _, mb := range m.team.members {
		if mb.Status == team.StatusWorking {
			m.prog.begin(mb.Name)
		}
	}
}

// busy reports whether an agent works now.
func (m *Model) busy(name string) bool {
	if name == workspace.LeadName {
		return m.leadBusy
	}
	i := m.findMember(name)
	return i >= 0 && m.team.members[i].Status == team.StatusWorking
}

// begin notes now as when name began working, unless it already works.
func (p *progress) begin(name string) {
	if _, ok := p.since[name]; !ok {
		p.since[name] = p.now()
	}
}

// tick asks for the next frame when somebody works and none is on its way.
func (m *Model) tick() tea.Cmd {
	if m.prog.ticking || m.quitting || len(m.prog.since) == 0 {
		return nil
	}
	m.prog.ticking = true
	return tea.Tick(tickInterval, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// leadStatus is the lead's state in words: "idle", or "⠋ working 12s ·
// running bash" while it works.
func (m *Model) leadStatus() string {
	if !m.leadBusy {
		return "idle"
	}
	s := "working"
	if w := m.prog.working(workspace.LeadName); w != "" {
		s = m.prog.spinner() + " working " + m.prog.elapsed(workspace.LeadName)
	}
	if a := m.team.activity[workspace.LeadName]; a != "" && a != "thinking" {
		s += " · " + a
	}
	return s
}

// mateWork is " · ⠋ working 12s · running bash" for the focused teammate
// while it works, "" otherwise.
func (m *Model) mateWork() string {
	name := m.mate.name
	w := m.prog.working(name)
	if w == "" {
		return ""
	}
	s := " · " + m.prog.spinner() + " working " + m.prog.elapsed(name)
	if a := m.team.activity[name]; a != "" && a != "thinking" {
		s += " · " + a
	}
	return s
}
