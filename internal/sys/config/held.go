package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentteam/agentteam/internal/sys/permission"
)

// Held is what an untrusted project file says that would let more run
// without asking, or give commands more than the sandbox's defaults:
// none of it applies until the person trusts the project (agentteam
// trust). Deny and ask rules, and stricter settings, always apply.
type Held struct {
	Allow []permission.Entry
	// Mode is the project's mode when it is looser than the user file's (or
	// the user file says none): the command applies it only where it is
	// at least as strict as its own default.
	Mode          Value[permission.Mode]
	Env, Writable Value[[]string]
	// Network is "on" when the project file says so.
	Network Value[string]
	// MCP names the project's MCP servers: programs that run as the person.
	MCP []string
	// Hooks are the project's hooks, one line each: commands that run as
	// the person, outside the sandbox.
	Hooks []string
	// Problem is why the trust could not be read, when it could not.
	Problem error
}

// IsEmpty reports whether nothing is held back.
func (h Held) IsEmpty() bool {
	return len(h.Allow) == 0 && !h.Mode.IsSet() && !h.Env.IsSet() && !h.Writable.IsSet() && !h.Network.IsSet() && len(h.MCP) == 0 && len(h.Hooks) == 0
}

// Lines are the held settings as the file says them, one each; the mode
// only if withMode.
func (h Held) Lines(withMode bool) []string {
	var out []string
	for _, e := range h.Allow {
		out = append(out, fmt.Sprintf("permissions.allow %q", e.Rule.String()))
	}
	if withMode && h.Mode.IsSet() {
		out = append(out, fmt.Sprintf("permissions.mode = %q", string(h.Mode.V)))
	}
	for _, l := range []struct {
		name string
		v    Value[[]string]
	}{{"sandbox.env", h.Env}, {"sandbox.writable", h.Writable}} {
		if l.v.IsSet() {
			out = append(out, fmt.Sprintf("%s = %s", l.name, quoteList(l.v.V)))
		}
	}
	if h.Network.IsSet() {
		out = append(out, fmt.Sprintf("sandbox.network = %q", h.Network.V))
	}
	return append(append(out, heldMCP(h.MCP)...), h.Hooks...)
}

func (h Held) lines() []string { return h.Lines(true) }

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// AtLeastAsStrict reports whether mode a asks at least whenever b does.
func AtLeastAsStrict(a, b permission.Mode) bool {
	return slices.Index(permission.Modes, a) <= slices.Index(permission.Modes, b)
}

// held is what f says that waits for trust, attributed to src. A mode
// waits unless it is ask, or no looser than userMode (the user file's).
func (f *rawFile) held(src Source, userMode Value[permission.Mode]) Held {
	var h Held
	p := &f.Permissions
	for _, s := range p.Allow {
		r, _ := permission.ParseRule(s) // checked in check
		h.Allow = append(h.Allow, permission.Entry{Rule: r, From: string(src)})
	}
	if p.Mode != nil {
		m := permission.Mode(*p.Mode)
		if m != permission.ModeAsk && (!userMode.IsSet() || !AtLeastAsStrict(m, userMode.V)) {
			h.Mode = Value[permission.Mode]{m, src}
		}
	}
	sb := &f.Sandbox
	if sb.Env != nil {
		h.Env = Value[[]string]{sb.Env, src}
	}
	if sb.Writable != nil {
		h.Writable = Value[[]string]{sb.Writable, src}
	}
	if sb.Network != nil && *sb.Network == "on" {
		h.Network = Value[string]{*sb.Network, src}
	}
	h.MCP = sortedKeys(f.MCP.Servers)
	h.Hooks = f.heldHooks()
	return h
}

// holdBack takes out of f what waits for trust and returns it.
func (f *rawFile) holdBack(src Source, userMode Value[permission.Mode]) Held {
	h := f.held(src, userMode)
	f.Permissions.Allow = nil
	if h.Mode.IsSet() {
		f.Permissions.Mode = nil
	}
	if h.Env.IsSet() {
		f.Sandbox.Env = nil
	}
	if h.Writable.IsSet() {
		f.Sandbox.Writable = nil
	}
	if h.Network.IsSet() {
		f.Sandbox.Network = nil
	}
	f.MCP.Servers = nil
	f.Hooks = nil
	return h
}

// holdUntrusted takes out of the project file f what waits for trust,
// unless the person trusts its bytes.
func (c *Config) holdUntrusted(f *rawFile, getenv func(string) string, workspace string) {
	trusted, err := isTrusted(getenv, workspace, f.sha256)
	c.Project.Trusted = trusted
	if trusted {
		return
	}
	c.Held = f.holdBack(c.Project.Source, c.Permissions.Mode)
	c.Held.Problem = err
}
