package team

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentteam/agentteam/internal/plug/agentsmd"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// instructions is one agent's AGENTS.md files: read before each of its
// cycles (loop.AgentConfig.Instructions), with an event when what it is
// given changes, so the person sees which files it read and why one was
// skipped.
type instructions struct {
	t     *Team
	agent string
	dir   string // where it works
	root  string // its workspace (its worktree), whose files its rules speak of

	mu   sync.Mutex
	last string // the Set's key last told
}

// instructionsFor is the agent's Instructions for the loop; nil when the
// team reads no AGENTS.md files. The files are read once now, so the
// person is told before the agent's first cycle.
func (t *Team) instructionsFor(agent string, ws *workspace.Workspace) func() string {
	if t.opts.Instructions == nil {
		return nil
	}
	// Nothing to read is nothing to tell, until a file was read.
	in := &instructions{t: t, agent: agent, dir: ws.Root, root: ws.Root, last: agentsmd.Set{}.Key()}
	in.read()
	return in.read
}

// read is the section of the agent's system prompt the files make now.
func (in *instructions) read() string {
	set := in.t.opts.Instructions.LoadFor(in.dir, in.refuse)
	key := set.Key()
	in.mu.Lock()
	changed := key != in.last
	in.last = key
	in.mu.Unlock()
	if changed {
		in.t.events.Emit(event.Event{Agent: in.agent, Payload: instructionsEvent(set)})
	}
	return set.Text
}

// refuse says why a file of the agent's workspace may not reach it: a rule
// that denies or asks about its read_file. Being in its instructions must
// not get round the rules; a file above the workspace is not one its tools
// can read at all, so no rule speaks of it.
func (in *instructions) refuse(abs string) string {
	p := in.t.perms
	if p == nil {
		return ""
	}
	rel, err := filepath.Rel(in.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return ""
	}
	v := p.Policy(in.agent).Decide(permission.Call{Tool: tools.ReadFileName, Kind: permission.Read, Subject: filepath.ToSlash(rel)})
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
