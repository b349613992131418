package launch

import (
	"os"
	"slices"
	"strings"

	"github.com/agentteam/agentteam/internal/plug/hooks"
	"github.com/agentteam/agentteam/workspace"
)

// projectDirEnv tells a hook where the team's workspace is, as
// CLAUDE_PROJECT_DIR does Claude Code's.
const projectDirEnv = "AGENTTEAM_PROJECT_DIR"

// hooks are the configured hook commands (the project's once trusted), or
// nil for none.
func (g *GlobalOptions) hooks(ws *workspace.Workspace) *hooks.Runner {
	if g.Config == nil || len(g.Config.Hooks) == 0 {
		return nil
	}
	// The config check already refused what New would.
	r, _ := hooks.New(g.Config.Hooks, g.hookEnv(ws))
	return r
}

// hookEnv is a hook's environment: the person's own, since a hook is the
// person's command (their tokens for gh or a deploy included), without the
// variables that hold the model's key: that key is agentteam's to spend,
// and a hook, like a command the model runs, has no use for it.
func (g *GlobalOptions) hookEnv(ws *workspace.Workspace) []string {
	hide := []string{DefaultKeyEnv, g.APIKeyEnv(), projectDirEnv}
	if g.Config != nil {
		for _, p := range g.Config.Providers {
			if p.APIKeyEnv.V != "" {
				hide = append(hide, p.APIKeyEnv.V)
			}
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(hide, name) {
			env = append(env, kv)
		}
	}
	return append(env, projectDirEnv+"="+ws.Root)
}
