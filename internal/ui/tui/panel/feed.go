package panel

import (
	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
)

// Feed is the traffic between agents, newest at the bottom.
type Feed struct {
	msgs []inbox.Message
}

// Add keeps msgs, the newest poll.MaxFeed of all.
func (p *Feed) Add(msgs []inbox.Message) {
	p.msgs = append(p.msgs, msgs...)
	if len(p.msgs) > poll.MaxFeed {
		p.msgs = append([]inbox.Message(nil), p.msgs[len(p.msgs)-poll.MaxFeed:]...)
	}
}

// Render returns exactly h lines of at most w cells: a header, then the
// latest messages as "time from → to type: first line".
func (p *Feed) Render(st draw.Styles, w, h int) []string {
	if h <= 0 {
		return nil
	}
	lines := []string{st.Header.Render("Messages")}
	room := h - 1
	start := max(len(p.msgs)-room, 0)
	for _, m := range p.msgs[start:] {
		when := ""
		if w >= 60 { // the time is the first thing to go when it is narrow
			when = st.Dim.Render(m.Timestamp.Local().Format("15:04:05") + " ")
		}
		line := when + st.Who.Render(m.From) + st.Dim.Render(" → ") + st.Who.Render(m.To) +
			st.Dim.Render(" "+string(m.Type)+": ") + engine.FirstLine(m.Content, 200)
		lines = append(lines, draw.Clip(line, w))
	}
	if len(p.msgs) == 0 && room > 0 {
		lines = append(lines, st.Dim.Render("  none yet"))
	}
	return draw.Fit(lines, w, h)
}
