package poll

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/plug/mcp"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/registry"
)

// Interval is how often the Poller looks at the inbox and registry files,
// so that changes made by other processes (agentteam send) show up.
const Interval = 250 * time.Millisecond

// MaxFeed bounds the messages feed kept in memory.
const MaxFeed = 500

// Snapshot is the registry and the inboxes' counts as they are on disk.
type Snapshot struct {
	Config     registry.Config
	Unread     map[string]int // each inbox's unread messages
	LeadTokens int
}

// MCP is the MCP servers' states, sent when one changed.
type MCP struct {
	Servers []mcp.Status
}

// Feed is inbox messages not shown before, oldest first.
type Feed struct {
	Msgs []inbox.Message
}

// Poller reads the inboxes and the registry on a goroutine, never in
// Update: it looks at each inbox's mark (a file's stat, a stream's last
// sequence and read position) and rereads only those that changed.
type Poller struct {
	store Inboxes
	// mark is what tells an inbox changed without reading it; regSig the
	// registry file's, nil when the registry is not a file (it is then read
	// at every poll and counts as changed when its version moves).
	mark       func(ctx context.Context, name string) any
	regSig     func() fileSig
	reg        *registry.Registry
	leadTokens func() int
	wake       chan struct{}
	// mcp is the MCP servers' states (nil: none are watched); mcpSeen the
	// last ones sent.
	mcp     func() []mcp.Status
	mcpSeen string

	seen    map[string]int // messages of each inbox already sent to the feed
	sigs    map[string]any // each inbox's mark at the last count
	unread  map[string]int
	lastReg fileSig
	config  registry.Config
	tokens  int
	started bool
}

// Inboxes is the inboxes as the Poller and /inbox read them, on any
// store (team.Mailbox), each with a mark that tells cheaply whether it
// changed.
type Inboxes interface {
	Names(ctx context.Context) ([]string, error)
	ReadAll(ctx context.Context, name string) ([]inbox.Message, []inbox.BadLine, error)
	Stats(ctx context.Context, name string) (inbox.Stats, error)
	Mark(ctx context.Context, name string) (inbox.Mark, error)
}

// ForTeam polls tm's inboxes and registry, whichever store holds them,
// and the state of servers, the MCP servers tm was given (nil: none).
func ForTeam(tm *team.Team, servers *mcp.Manager, leadTokens func() int) *Poller {
	p := New(tm.Mailbox(), tm.Registry(), leadTokens)
	p.mcp = servers.Status
	return p
}

type fileSig struct {
	size int64
	mod  time.Time
}

// New polls store's inboxes through their marks, and reg whatever
// keeps it; a nil store polls the registry alone.
func New(store Inboxes, reg *registry.Registry, leadTokens func() int) *Poller {
	p := &Poller{reg: reg, leadTokens: leadTokens, wake: make(chan struct{}, 1),
		seen: map[string]int{}, sigs: map[string]any{}, unread: map[string]int{}}
	if store != nil {
		p.store = store
		p.mark = func(ctx context.Context, name string) any {
			m, err := store.Mark(ctx, name)
			if err != nil {
				return err.Error() // looked at again once it reads
			}
			return m
		}
	}
	if path := reg.Path(); path != "" {
		p.regSig = func() fileSig { return statSig(path) }
	}
	return p
}

// Poke asks for a look now (a message or status event happened); never blocks.
func (p *Poller) Poke() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Run polls until ctx ends, sending what changed.
func (p *Poller) Run(ctx context.Context, send func(tea.Msg), every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for _, m := range p.Poll(ctx) {
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

// Poll looks once and returns the messages for the UI (none if nothing changed).
func (p *Poller) Poll(ctx context.Context) []tea.Msg {
	var out []tea.Msg
	changed := !p.started
	p.started = true

	switch {
	case p.regSig == nil:
		if c, err := p.reg.Read(ctx); err == nil {
			changed = changed || c.Version != p.config.Version || !c.UpdatedAt.Equal(p.config.UpdatedAt)
			p.config = c
		}
	default:
		if sig := p.regSig(); sig != p.lastReg {
			if c, err := p.reg.Read(ctx); err == nil {
				p.lastReg, p.config, changed = sig, c, true
			}
		}
	}
	names, _ := p.store.Names(ctx)
	var fresh []inbox.Message
	for _, name := range names {
		sig := p.mark(ctx, name)
		if sig == p.sigs[name] {
			continue
		}
		p.sigs[name] = sig
		changed = true
		msgs, _, err := p.store.ReadAll(ctx, name)
		if err != nil {
			continue
		}
		if len(msgs) < p.seen[name] {
			p.seen[name] = 0 // the log was replaced
		}
		fresh = append(fresh, msgs[p.seen[name]:]...)
		p.seen[name] = len(msgs)
		if st, err := p.store.Stats(ctx, name); err == nil {
			p.unread[name] = st.Unread
		}
	}
	if p.leadTokens != nil {
		if n := p.leadTokens(); n != p.tokens {
			p.tokens, changed = n, true
		}
	}
	if p.mcp != nil {
		if servers := p.mcp(); len(servers) > 0 {
			if seen := fmt.Sprint(servers); seen != p.mcpSeen {
				p.mcpSeen = seen
				out = append(out, MCP{Servers: servers})
			}
		}
	}
	if len(fresh) > 0 {
		sort.SliceStable(fresh, func(i, j int) bool { return feedBefore(fresh[i], fresh[j]) })
		if len(fresh) > MaxFeed {
			fresh = fresh[len(fresh)-MaxFeed:]
		}
		out = append(out, Feed{Msgs: fresh})
	}
	if changed {
		unread := make(map[string]int, len(p.unread))
		for k, v := range p.unread {
			unread[k] = v
		}
		c := p.config
		c.Teammates = append([]registry.Member(nil), c.Teammates...)
		out = append(out, Snapshot{Config: c, Unread: unread, LeadTokens: p.tokens})
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
func statSig(path string) fileSig {
	var s fileSig
	if fi, err := os.Stat(path); err == nil {
		s.size, s.mod = fi.Size(), fi.ModTime()
	}
	return s
}
