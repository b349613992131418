package team

import (
	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/plugs"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/tasks"
)

// newTasks opens the task board (a file unless Options.Board gives
// another) as the team's agents use it (team/tasks); fenced, as a lead's
// process, it changes nothing once the process no longer runs the team.
func newTasks(t *Team, fenced bool) *tasks.Service {
	t.files.board = t.opts.Board
	if t.files.board == nil {
		t.files.board = board.New(t.ws.TasksPath())
	}
	t.files.board.OnWriteError(t.faults.CheckStorage)
	var doc tasks.Doc = t.files.board
	if fenced {
		doc = tasks.Fenced(doc, t.faults.Fence)
	}
	// The plug-ins of the agent of that name this process runs, as far as
	// it knows it (the lead, or one of its teammates).
	plugsOf := func(name string) plugs.Agent {
		if name == inbox.LeadName {
			return t.plugs.For(name, "lead", "")
		}
		t.roster.mu.Lock()
		m := t.roster.members[name]
		t.roster.mu.Unlock()
		if m == nil {
			return t.plugs.For(name, "", "")
		}
		return t.plugs.For(name, m.role, m.root)
	}
	return tasks.New(tasks.Deps{Board: doc, Events: t.events, Inboxes: t.store, Registry: t.reg,
		Idle: idleMates(t.roster), Plugs: plugsOf, Health: t.inboxes.health, Changed: t.changed.notify,
		Failure: failure, Auto: t.opts.AutoClaim})
}

// idleMates are the teammates r runs that are idle now.
func idleMates(r *roster) func() []tasks.Agent {
	return func() []tasks.Agent {
		var idle []tasks.Agent
		r.each(func(m *member) {
			if m.status == registry.StatusIdle {
				idle = append(idle, tasks.Agent{Name: m.name, Role: m.role})
			}
		})
		return idle
	}
}

// Board is the team's shared task board, as a file.
func (t *Team) Board() *board.Board { return t.files.board }
