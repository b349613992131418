package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// histSearch is ctrl+r's search of the input's history, as in bash: the
// newest entry holding what is typed shows in the input; ctrl+r again
// looks further back, enter keeps the entry (to edit or send), esc puts
// back what was there.
type histSearch struct {
	on    bool
	query string
	at    int    // the history entry shown; -1 none
	saved string // the input before the search
}

// key takes a key while the search is on, and says what the help bar
// shows then; took is false when the search is off.
func (s *histSearch) key(k tea.KeyPressMsg, in *input) (hint string, took bool) {
	if !s.on {
		return "", false
	}
	switch k.String() {
	case "ctrl+r":
		s.find(in, s.at-1)
	case "esc", "ctrl+c", "ctrl+g":
		in.set(s.saved)
		*s = histSearch{}
		return "", true
	case "enter", "tab", "right", "left", "up", "down":
		*s = histSearch{}
		return "", true
	case "backspace":
		if r := []rune(s.query); len(r) > 0 {
			s.query = string(r[:len(r)-1])
		}
		s.find(in, len(in.history)-1)
	default:
		if t := k.Text; t != "" {
			s.query += t
			s.find(in, len(in.history)-1)
		}
	}
	return s.words(), true
}

// start begins a history search of in's from the newest entry, and says
// what the help bar shows.
func (s *histSearch) start(in *input) string {
	*s = histSearch{on: true, at: -1, saved: in.value()}
	return s.words()
}

// find shows the newest entry at or before from that holds the query.
func (s *histSearch) find(in *input, from int) {
	q := strings.ToLower(s.query)
	for i := min(from, len(in.history)-1); i >= 0; i-- {
		if strings.Contains(strings.ToLower(in.history[i]), q) {
			s.at = i
			in.set(in.history[i])
			return
		}
	}
	if s.query == "" {
		s.at = -1
	}
}

func (s *histSearch) words() string {
	w := "history search: " + s.query
	if s.at < 0 && s.query != "" {
		w += " (nothing found)"
	}
	return w + " · ctrl+r older · enter keeps it · esc puts back"
}
