package sandbox

import (
	"slices"
	"strings"
)

// baseEnv are the variables a command gets from agentteam's environment
// when the config names no others; LC_* are added by prefix.
var baseEnv = []string{"PATH", "HOME", "USER", "LANG", "TERM", "SHELL", "TMPDIR"}

// Environ is a command's environment: from environ, only the variables in
// baseEnv, LC_* and extra, and never one named in hide (the model key's
// variable) nor one whose name says it holds a secret, even when extra
// names it.
func Environ(environ, extra, hide []string) []string {
	out := make([]string, 0, len(baseEnv)+len(extra))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || slices.Contains(hide, name) || Secret(name) {
			continue
		}
		if slices.Contains(baseEnv, name) || strings.HasPrefix(name, "LC_") || slices.Contains(extra, name) {
			out = append(out, kv)
		}
	}
	return out
}

// Secret reports whether a variable's name says it holds a secret:
// *_TOKEN, *_SECRET, *_KEY or *PASSWORD*, in any case.
func Secret(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasSuffix(n, "_TOKEN") || strings.HasSuffix(n, "_SECRET") || strings.HasSuffix(n, "_KEY") ||
		strings.Contains(n, "PASSWORD")
}

// SetEnv returns env with name set to value, replacing any earlier value.
func SetEnv(env []string, name, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != name {
			out = append(out, kv)
		}
	}
	return append(out, name+"="+value)
}
