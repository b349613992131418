package team

import (
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/workspace"
)

// pingPongRun is how many messages in a row two teammates may bounce, each
// repeating itself, before the lead is told: four round trips.
const pingPongRun = 8

// pingPong notices two teammates bouncing near-identical messages, which
// costs model calls until something stops it.
type pingPong struct {
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

// observe counts a message from → to; true the once the bouncing is seen:
// each of the two has sent the other the same message pingPongRun/2 times
// in a row, however their messages interleave.
func (p *pingPong) observe(from, to, content string) bool {
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
	if e.repeats[from] >= pingPongRun/2 && e.repeats[to] >= pingPongRun/2 && !e.told {
		e.told = true
		return true
	}
	return false
}

func isPerson(name string) bool { return name == workspace.LeadName || name == workspace.UserName }

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

// tellPingPong tells the lead that from and to bounce messages.
func (ms *Messenger) tellPingPong(from, to, content string) {
	text := fmt.Sprintf("agentteam noticed that %s and %s have sent each other near-identical messages %d times in a row (the last: %q): they may be stuck in a loop that spends model calls; tell them to stop, give one a new task, or shut one down",
		from, to, pingPongRun, event.Clip(content, 120))
	if _, err := ms.deliver(from, workspace.LeadName, inbox.TypeError, text); err != nil {
		ms.t.events.Emit(event.Event{Agent: from, Payload: failure(event.ClassInbox, "telling the lead of a message loop: ", err)})
	}
}
