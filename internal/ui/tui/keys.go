package tui

import (
	"strings"

	"github.com/agentteam/agentteam/internal/ui/tui/draw"
)

// allKeys is what `?` shows: key, what it does.
var allKeys = [][2]string{
	{"enter", "send to the lead, or to the focused teammate's inbox"},
	{"ctrl+j / alt+enter", "new line (shift+enter where the terminal reports it)"},
	{"up / down", "history, on the input's first / last line"},
	{"ctrl+r", "search the history: ctrl+r older, esc puts back"},
	{"tab / shift+tab", "next / previous agent; completes a /command or @path"},
	{"esc", "interrupt the lead; back to the lead from a teammate"},
	{"pgup / pgdn, wheel", "scroll (the wheel after /mouse on); the bottom follows"},
	{"ctrl+o", "expand / collapse the results of tool calls"},
	{"ctrl+t", "show / fold the models' reasoning (thinking… lines)"},
	{"ctrl+g", "show / fold every write's diff (✎ wrote … lines)"},
	{"home / end", "the conversation's top / follow new output (input empty)"},
	{"?", "all keys (input empty); esc or ? closes"},
	{"ctrl+x ctrl+e", "write the input in $VISUAL / $EDITOR; enter sends it"},
	{"1 2 3 4 / y s A n", "an ask: allow once / prefix this session / always / deny"},
	{"ctrl+c", "quit: teammates are stopped and marked shutdown"},
}

// helpBar is the keys that do something now, in one line of at most w
// cells: the least needed keys are left out first when it is narrow.
func (s *screen) helpBar(w int) string {
	m := s.m
	if m.hint != "" {
		return m.st.Dim.Render(m.hint)
	}
	type hk struct {
		key, what string
		rank      int // lower is dropped last
	}
	var keys []hk
	if s.help {
		keys = append(keys, hk{"esc", "close", 0})
	}
	if m.focus == "" && m.leadBusy {
		keys = append(keys, hk{"esc", "interrupt", 0})
	}
	if m.focus != "" {
		keys = append(keys, hk{"esc", "back to lead", 1})
	}
	if strings.HasPrefix(m.in.value(), "/") || m.pop.completion().path {
		keys = append(keys, hk{"tab", "complete", 1})
	} else {
		keys = append(keys, hk{"tab", "focus", 2})
	}
	keys = append(keys, hk{"enter", "send", 1}, hk{"ctrl+j", "newline", 4}, hk{"pgup/pgdn", "scroll", 5})
	if m.in.empty() {
		keys = append(keys, hk{"?", "keys", 3})
	}
	keys = append(keys, hk{"ctrl+c", "quit", 0})
	for {
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = m.st.Key.Render(k.key) + " " + m.st.Help.Render(k.what)
		}
		line := strings.Join(parts, m.st.Help.Render(" · "))
		worst := -1
		for i, k := range keys {
			if worst < 0 || k.rank > keys[worst].rank {
				worst = i
			}
		}
		if draw.Width(line) <= w || len(keys) == 1 || keys[worst].rank == 0 {
			return line
		}
		keys = append(keys[:worst], keys[worst+1:]...)
	}
}
