package team

import (
	"strings"
	"sync"

	"github.com/agentteam/agentteam/internal/agentsmd"
)

// instructions is one agent's AGENTS.md files: read before each of its
// cycles (loop.AgentConfig.Instructions), with an event when what it is
// given changes, so the person sees which files it read and why one was
// skipped.
type instructions struct {
	t     *Team
	agent string
	dir   string // where it works

	mu   sync.Mutex
	last string // the Set's key last told
}

// instructionsFor is the agent's Instructions for the loop; nil when the
// team reads no AGENTS.md files. The files are read once now, so the
// person is told before the agent's first cycle.
func (t *Team) instructionsFor(agent, dir string) func() string {
	if t.opts.Instructions == nil {
		return nil
	}
	// Nothing to read is nothing to tell, until a file was read.
	in := &instructions{t: t, agent: agent, dir: dir, last: agentsmd.Set{}.Key()}
	in.read()
	return in.read
}

// read is the section of the agent's system prompt the files make now.
func (in *instructions) read() string {
	set := in.t.opts.Instructions.Load(in.dir)
	key := set.Key()
	in.mu.Lock()
	changed := key != in.last
	in.last = key
	in.mu.Unlock()
	if changed {
		in.t.events.Emit(Event{Agent: in.agent, Payload: instructionsEvent(set)})
	}
	return set.Text
}

func instructionsEvent(s agentsmd.Set) Instructions {
	p := Instructions{Summary: s.Summary(), Notes: s.Notes}
	for _, f := range s.Files {
		p.Files = append(p.Files, f.Path)
	}
	return p
}

// text is what the agent was given, in a line.
func (p Instructions) text() string {
	s := "reads no AGENTS.md"
	if len(p.Files) > 0 {
		s = "reads " + strings.Join(p.Files, ", ")
	}
	if len(p.Notes) > 0 {
		s += " (" + strings.Join(p.Notes, " ") + ")"
	}
	return s
}
