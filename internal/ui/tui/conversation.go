package tui

import "github.com/agentteam/agentteam/internal/ui/tui/draw"

// convPane is a scrollable conversation. It renders only the entries that
// are visible, from the bottom up while it follows new output, and from an
// anchor (entry, line) when the person scrolled up, so new output at the
// bottom does not move what they are reading.
type convPane struct {
	entries []*entry
	// stream is the reply still arriving, wherever it is: an entry added
	// after it (the person's next prompt) must not leave it streaming.
	stream  *entry
	follow  bool
	top     int // first visible entry when not following
	topLine int // first visible line of that entry
}

func newConvPane() *convPane { return &convPane{follow: true} }

func (p *convPane) add(e *entry) { p.entries = append(p.entries, e) }

func (p *convPane) last() *entry {
	if len(p.entries) == 0 {
		return nil
	}
	return p.entries[len(p.entries)-1]
}

func (p *convPane) clear() {
	p.entries, p.stream = nil, nil
	p.follow, p.top, p.topLine = true, 0, 0
}

// remove takes e out of the conversation.
func (p *convPane) remove(e *entry) {
	for i, x := range p.entries {
		if x == e {
			p.entries = append(p.entries[:i], p.entries[i+1:]...)
			return
		}
	}
}

// Render returns exactly h lines of at most w cells.
func (p *convPane) Render(r *renderer, w, h int) []string {
	if h <= 0 {
		return nil
	}
	if !p.follow {
		if lines, ok := p.fromAnchor(r, w, h); ok {
			lines = draw.Fit(lines, w, h)
			lines[h-1] = draw.Pad(r.st.Dim.Render("  ▼ more below: pgdn or end to follow"), w)
			return lines
		}
		p.follow = true
	}
	return draw.Fit(p.fromBottom(r, w, h), w, h)
}

// fromBottom is the last h lines; fewer at the start of a conversation.
func (p *convPane) fromBottom(r *renderer, w, h int) []string {
	var chunks [][]string
	n := 0
	for i := len(p.entries) - 1; i >= 0 && n < h; i-- {
		l := r.lines(p.entries[i], w)
		chunks = append(chunks, l)
		n += len(l)
	}
	out := make([]string, 0, n)
	for i := len(chunks) - 1; i >= 0; i-- {
		out = append(out, chunks[i]...)
	}
	if len(out) > h {
		out = out[len(out)-h:]
	}
	return out
}

// fromAnchor is h lines from the anchor; ok is false when the anchor is so
// near the end that following shows the same.
func (p *convPane) fromAnchor(r *renderer, w, h int) ([]string, bool) {
	if p.top >= len(p.entries) {
		return nil, false
	}
	out := make([]string, 0, h+1)
	for i := p.top; i < len(p.entries) && len(out) <= h; i++ {
		l := r.lines(p.entries[i], w)
		if i == p.top {
			l = l[min(p.topLine, len(l)):]
		}
		out = append(out, l...)
	}
	if len(out) <= h {
		return nil, false
	}
	return out[:h], true
}

// topPosition is the anchor of what is on screen now.
func (p *convPane) topPosition(r *renderer, w, h int) (int, int) {
	if !p.follow {
		return p.top, p.topLine
	}
	n := 0
	for i := len(p.entries) - 1; i >= 0; i-- {
		n += len(r.lines(p.entries[i], w))
		if n >= h {
			return i, n - h
		}
	}
	return 0, 0
}

// scroll moves by n lines: negative is up, toward older output.
func (p *convPane) scroll(r *renderer, w, h, n int) {
	if len(p.entries) == 0 || n == 0 {
		return
	}
	i, j := p.topPosition(r, w, h)
	j += n
	for j < 0 && i > 0 {
		i--
		j += len(r.lines(p.entries[i], w))
	}
	if j < 0 {
		j = 0
	}
	for i < len(p.entries)-1 && j >= len(r.lines(p.entries[i], w)) {
		j -= len(r.lines(p.entries[i], w))
		i++
	}
	p.top, p.topLine, p.follow = i, j, false
	if _, ok := p.fromAnchor(r, w, h); !ok {
		p.follow = true
	}
}

// toEnd follows new output again.
func (p *convPane) toEnd() { p.follow = true }

// toStart shows the beginning of the conversation.
func (p *convPane) toStart(r *renderer, w, h int) {
	p.top, p.topLine, p.follow = 0, 0, false
	if _, ok := p.fromAnchor(r, w, h); !ok {
		p.follow = true
	}
}
