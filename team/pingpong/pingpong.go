// Package pingpong notices two teammates bouncing near-identical
// messages, which costs model calls until something stops it.
package pingpong

import (
	"strings"
	"sync"
	"unicode"

	"github.com/agentteam/agentteam/inbox"
)

// Run is how many messages in a row two teammates may bounce, each
// repeating itself, before the lead is told: four round trips.
const Run = 8

// Detector watches the team's messages, pair by pair; its zero value is
// ready.
type Detector struct {
	mu    sync.Mutex
	pairs map[[2]string]*exchange
}

// exchange is what two teammates have been saying to each other: per
// sender, its last message (normalized) and how many times in a row it
// has sent it in this pair.
type exchange struct {
	said    map[string]string
	repeats map[string]int
	told    bool
}

// Observe counts a message from → to; true the once the bouncing is seen:
// each of the two has sent the other the same message Run/2 times
// in a row, however their messages interleave.
func (p *Detector) Observe(from, to, content string) bool {
	if from == to || isPerson(from) || isPerson(to) {
		return false
	}
	key := [2]string{from, to}
	if to < from {
		key = [2]string{to, from}
	}
	norm := normalizeMessage(content)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pairs == nil {
		p.pairs = map[[2]string]*exchange{}
	}
	e := p.pairs[key]
	if e == nil {
		e = &exchange{said: map[string]string{}, repeats: map[string]int{}}
		p.pairs[key] = e
	}
	if prev, had := e.said[from]; had && prev == norm {
		e.repeats[from]++
	} else {
		e.repeats[from], e.told = 1, false // something new: a new run
	}
	e.said[from] = norm
	if e.repeats[from] >= Run/2 && e.repeats[to] >= Run/2 && !e.told {
		e.told = true
		return true
	}
	return false
}

func isPerson(name string) bool { return name == inbox.LeadName || name == inbox.UserName }

// normalizeMessage is content as a loop repeats it: case, digits and
// spacing aside ("ping 3" and "Ping 4" are the same).
func normalizeMessage(s string) string {
	var b strings.Builder
	space := false
	for _, r := range strings.TrimSpace(s) {
		switch {
		case unicode.IsSpace(r):
			space = true
			continue
		case unicode.IsDigit(r):
			r = '#'
		default:
			r = unicode.ToLower(r)
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
