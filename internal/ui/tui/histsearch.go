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

// searchKey takes a key while the search is on; false when it is not.
func (m *Model) searchKey(k tea.KeyPressMsg) bool {
	s := &m.search
	if !s.on {
		return false
	}
	switch k.String() {
	case "ctrl+r":
		s.find(m, s.at-1)
	case "esc", "ctrl+c", "ctrl+g":
		m.in.set(s.saved)
		*s = histSearch{}
		m.hint = ""
		return true
	case "enter", "tab", "right", "left", "up", "down":
		*s = histSearch{}
		m.hint = ""
		return true
	case "backspace":
		if r := []rune(s.query); len(r) > 0 {
			s.query = string(r[:len(r)-1])
		}
		s.find(m, len(m.in.history)-1)
	default:
		if t := k.Text; t != "" {
			s.query += t
			s.find(m, len(m.in.history)-1)
		}
	}
	m.hint = s.words()
	return true
}

// startSearch begins a history search from the newest entry.
func (m *Model) startSearch() {
	m.search = histSearch{on: true, at: -1, saved: m.in.value()}
	m.hint = m.search.words()
}

// find shows the newest entry at or before from that holds the query.
func (s *histSearch) find(m *Model, from int) {
	q := strings.ToLower(s.query)
	for i := min(from, len(m.in.history)-1); i >= 0; i-- {
		if strings.Contains(strings.ToLower(m.in.history[i]), q) {
			s.at = i
			m.in.set(m.in.history[i])
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
