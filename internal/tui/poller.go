package tui

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team"
)

// PollInterval is how often the poller looks at the inbox and registry files,
// so that changes made by other processes (agentteam send) show up.
const PollInterval = 250 * time.Millisecond

// maxFeed bounds the messages feed kept in memory.
const maxFeed = 500

// snapshotMsg is the registry and the inboxes' counts as they are on disk.
type snapshotMsg struct {
	config     team.Config
	unread     map[string]int
	leadTokens int
}

// feedMsg is inbox messages not shown before, oldest first.
type feedMsg struct {
	msgs []inbox.Message
}

// poller reads the inbox files and the registry on a goroutine, never in
// Update: it stats each file and rereads only those that changed.
type poller struct {
	store      *inbox.Store
	reg        *team.Registry
	leadTokens func() int
	wake       chan struct{}

	seen    map[string]int     // messages of each inbox already sent to the feed
	sigs    map[string]fileSig // inbox + cursor signature at the last count
	unread  map[string]int
	regSig  fileSig
	config  team.Config
	tokens  int
	started bool
}

type fileSig struct {
	size, cursorSize int64
	mod, cursorMod   time.Time
}

func newPoller(store *inbox.Store, reg *team.Registry, leadTokens func() int) *poller {
	return &poller{store: store, reg: reg, leadTokens: leadTokens, wake: make(chan struct{}, 1),
		seen: map[string]int{}, sigs: map[string]fileSig{}, unread: map[string]int{}}
}

// poke asks for a look now (a message or status event happened); never blocks.
func (p *poller) poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// run polls until ctx ends, sending what changed.
func (p *poller) run(ctx context.Context, send func(tea.Msg), every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for _, m := range p.poll() {
			send(m)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-p.wake:
		}
	}
}

// poll looks once and returns the messages for the UI (none if nothing changed).
func (p *poller) poll() []tea.Msg {
	var out []tea.Msg
	changed := !p.started
	p.started = true

	if sig := statSig(p.reg.Path(), ""); sig != p.regSig {
		if c, err := p.reg.Read(); err == nil {
			p.regSig, p.config, changed = sig, c, true
		}
	}
	names, _ := p.store.Names()
	var fresh []inbox.Message
	for _, name := range names {
		sig := statSig(p.store.Path(name), filepath.Join(p.store.Dir(), name+".cursor"))
		if sig == p.sigs[name] {
			continue
		}
		p.sigs[name] = sig
		changed = true
		msgs, _, err := p.store.ReadAll(name)
		if err != nil {
			continue
		}
		if len(msgs) < p.seen[name] {
			p.seen[name] = 0 // the log was replaced
		}
		fresh = append(fresh, msgs[p.seen[name]:]...)
		p.seen[name] = len(msgs)
		if st, err := p.store.Stats(name); err == nil {
			p.unread[name] = st.Unread
		}
	}
	if p.leadTokens != nil {
		if n := p.leadTokens(); n != p.tokens {
			p.tokens, changed = n, true
		}
	}
	if len(fresh) > 0 {
		sort.SliceStable(fresh, func(i, j int) bool { return feedBefore(fresh[i], fresh[j]) })
		if len(fresh) > maxFeed {
			fresh = fresh[len(fresh)-maxFeed:]
		}
		out = append(out, feedMsg{msgs: fresh})
	}
	if changed {
		unread := make(map[string]int, len(p.unread))
		for k, v := range p.unread {
			unread[k] = v
		}
		c := p.config
		c.Teammates = append([]team.Member(nil), c.Teammates...)
		out = append(out, snapshotMsg{config: c, unread: unread, leadTokens: p.tokens})
	}
	return out
}

// feedBefore orders the feed by time. Times are kept to the millisecond, so
// a request and its answer can share one: the request goes first, then the
// message ids (time-ordered within a process), not the inboxes' names.
func feedBefore(a, b inbox.Message) bool {
	if !a.Timestamp.Equal(b.Timestamp) {
		return a.Timestamp.Before(b.Timestamp)
	}
	if a.CorrelationID != "" && a.CorrelationID == b.CorrelationID {
		if ra, rb := isResponse(a), isResponse(b); ra != rb {
			return rb
		}
	}
	return a.ID < b.ID
}

// isResponse reports whether m answers a request (shutdown, plan approval).
func isResponse(m inbox.Message) bool { return strings.HasSuffix(string(m.Type), "_response") }

// statSig is what tells a file changed without reading it.
func statSig(path, cursor string) fileSig {
	var s fileSig
	if fi, err := os.Stat(path); err == nil {
		s.size, s.mod = fi.Size(), fi.ModTime()
	}
	if cursor != "" {
		if fi, err := os.Stat(cursor); err == nil {
			s.cursorSize, s.cursorMod = fi.Size(), fi.ModTime()
		}
	}
	return s
}
