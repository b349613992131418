package linechat

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/internal/ui/engine"
)

// screenOnly are the TUI's commands that have no meaning in lines.
var screenOnly = map[string]string{
	"/reasoning": "the line chat shows no reasoning",
	"/copy":      "select the text in your terminal",
	"/mouse":     "the line chat does not use the mouse",
	"/clear":     "the line chat keeps what it printed",
}

// command runs a slash command: the TUI's own, through the engine, but
// for the few that are the screen's. It reports whether the person leaves.
func (s *session) command(ctx context.Context, eng engine.Engine, line string) bool {
	name, call, err := engine.EngineCommand(line, "", s.firstAsk())
	switch {
	case err != nil:
		s.out.line(err.Error())
	case call != nil:
		s.show(call(ctx, eng))
	case name == "/quit" || name == "/exit":
		return true
	case name == "/help":
		s.out.line(helpText())
	case name == "/auto":
		s.autoCommand(eng, strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), name)))
	case screenOnly[name] != "":
		s.out.line(name + " is for the full-screen chat: " + screenOnly[name])
	default:
		s.out.line(fmt.Sprintf("unknown command %s: /help lists the commands", name))
	}
	return false
}

// autoCommand is /auto on|off (alone: switch).
func (s *session) autoCommand(eng engine.Engine, arg string) {
	on, err := engine.Toggle("/auto", arg, s.auto)
	if err != nil {
		s.out.line(err.Error())
		return
	}
	s.auto = on
	eng.SetAuto(on)
	s.out.line(engine.AutoWords(on))
}

// helpText lists the TUI's commands that work here, then the line chat's keys.
func helpText() string {
	var b strings.Builder
	b.WriteString("Commands:\n")
	for _, c := range engine.Commands() {
		if screenOnly[c.Name] == "" {
			fmt.Fprintf(&b, "  %-32s  %s\n", strings.TrimSpace(c.Name+" "+c.Args), c.Help)
		}
	}
	b.WriteString("Keys:\n")
	b.WriteString("  y, a, n REASON                    answer the oldest permission ask: allow once, always, deny\n")
	b.WriteString("  y, n                              at the team's budget: go on with as much again, or stop\n")
	b.WriteString("  ctrl+c                            interrupt the lead's turn; twice: leave\n")
	b.WriteString("  ctrl+d (end of input), /quit      stop the teammates and leave")
	return b.String()
}
