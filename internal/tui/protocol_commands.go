package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentteam/agentteam/tools"
)

// planFlag before the name starts the teammate in plan mode.
const planFlag = "--plan"

// spawn is /spawn [--plan] name role prompt.
func (m *Model) spawn(c command) {
	plan := false
	if first, rest, _ := strings.Cut(c.rest, " "); first == planFlag {
		plan, c.rest = true, strings.TrimSpace(rest)
	}
	args := c.split(3)
	if len(args) < 3 {
		m.note(noteMsg{text: "usage: /spawn [--plan] name role prompt", isErr: true})
		return
	}
	spec := tools.SpawnSpec{Name: args[0], Role: args[1], Prompt: args[2], PlanMode: plan}
	m.do(func() tea.Msg {
		if err := m.eng.Spawn(m.ctx, spec); err != nil {
			return noteMsg{text: err.Error(), isErr: true}
		}
		if spec.PlanMode {
			return hintMsg(fmt.Sprintf("spawned %s (%s) in plan mode: its plan will ask for your approval", spec.Name, spec.Role))
		}
		return hintMsg(fmt.Sprintf("spawned %s (%s)", spec.Name, spec.Role))
	})
}

// review is /approve name [feedback] and /reject name feedback.
func (m *Model) review(c command, approve bool) {
	args := c.split(2)
	if approve && len(args) < 1 {
		m.note(noteMsg{text: "usage: /approve name [feedback]", isErr: true})
		return
	}
	if !approve && len(args) < 2 {
		m.note(noteMsg{text: "usage: /reject name feedback (say what to change)", isErr: true})
		return
	}
	name, feedback := args[0], ""
	if len(args) > 1 {
		feedback = args[1]
	}
	m.do(func() tea.Msg {
		text, err := m.eng.ReviewPlan(m.ctx, name, approve, feedback)
		if err != nil {
			return noteMsg{text: err.Error(), isErr: true}
		}
		return noteMsg{text: text}
	})
}

// defaultShutdownReason is what a teammate reads when the person gave none.
const defaultShutdownReason = "the person asked for it from the chat"

// shutdown is /shutdown name [reason].
func (m *Model) shutdown(c command) {
	args := c.split(2)
	if len(args) < 1 {
		m.note(noteMsg{text: "usage: /shutdown name [reason]", isErr: true})
		return
	}
	name, reason := args[0], defaultShutdownReason
	if len(args) > 1 {
		reason = args[1]
	}
	m.do(func() tea.Msg {
		text, err := m.eng.Shutdown(m.ctx, name, reason)
		if err != nil {
			return noteMsg{text: err.Error(), isErr: true}
		}
		return noteMsg{text: text}
	})
}
