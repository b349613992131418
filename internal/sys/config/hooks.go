package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/agentteam/agentteam/internal/plug/hooks"
)

// rawHook is one [[hooks.EVENT]] table: a command, the tool names it is
// for, and its timeout.
type rawHook struct {
	Matcher *string `toml:"matcher"`
	Command *string `toml:"command"`
	Timeout *string `toml:"timeout"`
}

// checkHooks refuses a hook no run can start: an event spelled otherwise
// than hooks names it, no command, a matcher that is no regexp.
func (f *rawFile) checkHooks(fail func(toml.Key, string, ...any) error) error {
	for _, ev := range sortedKeys(f.Hooks) {
		key := toml.Key{"hooks", ev}
		if !hooks.Known(ev) {
			for _, known := range hooks.Events {
				if strings.EqualFold(string(known), ev) {
					return fail(key, "is not a hook event agentteam knows: events are case-sensitive, and this one is written %s", known)
				}
			}
			return fail(key, "is not a hook event agentteam knows (%s)", eventNames())
		}
		for _, h := range f.Hooks[ev] {
			if h.Command == nil || strings.TrimSpace(*h.Command) == "" {
				return fail(key, "has a hook without a command: give each [[hooks.%s]] command = \"...\"", ev)
			}
			if h.Matcher != nil {
				if _, err := hooks.CompileMatcher(*h.Matcher); err != nil {
					return fail(append(key, "matcher"), "%s", strings.TrimPrefix(err.Error(), fmt.Sprintf("matcher %q ", *h.Matcher)))
				}
			}
			if err := checkDuration(fail, append(key, "timeout"), h.Timeout); err != nil {
				return err
			}
		}
	}
	return nil
}

func eventNames() string {
	names := make([]string, len(hooks.Events))
	for i, e := range hooks.Events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// mergeHooks adds f's hooks after those of the files read before: the
// user file's run first, then the project's.
func (c *Config) mergeHooks(f *rawFile, src Source) {
	for _, ev := range hooks.Events {
		for _, h := range f.Hooks[string(ev)] {
			hk := hooks.Hook{Event: ev, Command: *h.Command, From: string(src)}
			if h.Matcher != nil {
				hk.Matcher = *h.Matcher
			}
			if h.Timeout != nil {
				hk.Timeout, _ = time.ParseDuration(*h.Timeout)
			}
			c.Hooks = append(c.Hooks, hk)
		}
	}
}

// heldHooks are the project's hooks, which wait for trust: each one a
// command that runs as the person.
func (f *rawFile) heldHooks() []string {
	var out []string
	for _, ev := range hooks.Events {
		for _, h := range f.Hooks[string(ev)] {
			out = append(out, fmt.Sprintf("hooks.%s %q", ev, *h.Command))
		}
	}
	return out
}
