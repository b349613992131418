package plugs

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentteam/agentteam/internal/plug/agentsmd"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
)

// instructions is one agent's AGENTS.md files: read before each of its
// cycles, with an event when what it is given changes, so the person sees
// which files it read and why one was skipped.
type instructions struct {
	a   Agent
	mu  sync.Mutex
	key string // the Set's key last told
}

// Instructions is the agent's AGENTS.md section for its system prompt,
// read from where it works at each call (loop.AgentConfig.Instructions);
// nil when the team reads no AGENTS.md files. The files are read once now,
// so the person is told before the agent's first cycle.
func (a Agent) Instructions() func() string {
	if a.p.o.Instructions == nil {
		return nil
	}
	// Nothing to read is nothing to tell, until a file was read.
	in := &instructions{a: a, key: agentsmd.Set{}.Key()}
	in.read()
	return in.read
}

// read is the section of the agent's system prompt the files make now.
func (in *instructions) read() string {
	set := in.a.p.o.Instructions.LoadFor(in.a.cwd, in.refuse)
	key := set.Key()
	in.mu.Lock()
	changed := key != in.key
	in.key = key
	in.mu.Unlock()
	if changed {
		in.a.p.o.Events.Emit(event.Event{Agent: in.a.name, Payload: instructionsEvent(set)})
	}
	return set.Text
}

// refuse says why a file of the agent's workspace may not reach it: a rule
// that denies or asks about its read_file. Being in its instructions must
// not get round the rules; a file above the workspace is not one its tools
// can read at all, so no rule speaks of it.
func (in *instructions) refuse(abs string) string {
	if in.a.p.o.Policy == nil {
		return ""
	}
	rel, err := filepath.Rel(in.a.cwd, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	v := in.a.p.o.Policy(in.a.name).Decide(permission.Call{Tool: tools.ReadFileName, Kind: permission.Read, Subject: filepath.ToSlash(rel)})
	if v.Decision == permission.Allow {
		return ""
	}
	return fmt.Sprintf("the %s covers reading it", v.Why)
}

func instructionsEvent(s agentsmd.Set) event.Instructions {
	p := event.Instructions{Summary: s.Summary(), Notes: s.Notes}
	for _, f := range s.Files {
		p.Files = append(p.Files, f.Path)
	}
	return p
}
