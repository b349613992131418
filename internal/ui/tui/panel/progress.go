package panel

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/registry"
)

// TickMsg moves the spinner on; ticks run only while an agent works.
type TickMsg time.Time

// tickInterval is the spinner's frame time.
const tickInterval = 120 * time.Millisecond

// SpinFrames are the spinner's frames, one cell each.
var SpinFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// Progress is what the screen knows of work under way: when each working
// agent began, the spinner's frame, and each agent's context size.
type Progress struct {
	Now     func() time.Time // the clock; tests set their own
	frame   int
	ticking bool                 // a tick is on its way
	since   map[string]time.Time // working agents ("lead" too) and when they began
	context map[string]int       // tokens of each agent's last model call: its context's size then
}

// NewProgress is the progress of a team at rest.
func NewProgress() Progress {
	return Progress{Now: time.Now, since: map[string]time.Time{}, context: map[string]int{}}
}

// Spinner is the current frame.
func (p *Progress) Spinner() string { return SpinFrames[p.frame%len(SpinFrames)] }

// Elapsed is how long name has worked, short ("7s", "2m05s"); "" when it does not.
func (p *Progress) Elapsed(name string) string {
	start, ok := p.since[name]
	if !ok {
		return ""
	}
	return shortDuration(p.Now().Sub(start))
}

// Working says "⠋ 12s" for a working agent, "" otherwise.
func (p *Progress) Working(name string) string {
	e := p.Elapsed(name)
	if e == "" {
		return ""
	}
	return p.Spinner() + " " + e
}

func shortDuration(d time.Duration) string {
	s := int(max(d, 0) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}

// begin notes now as when name began working, unless it already works.
func (p *Progress) begin(name string) {
	if _, ok := p.since[name]; !ok {
		p.since[name] = p.Now()
	}
}

// defaultContextWindow is the window assumed for a model this table does
// not know: the common size of today's chat models, in tokens.
const defaultContextWindow = 128_000

// contextWindows are known models' windows in tokens, by the start of the
// model's name (the provider part of a label is ignored); the longest
// prefix that fits wins.
var contextWindows = map[string]int{
	"gpt-4o":        128_000,
	"gpt-4.1":       1_047_576,
	"gpt-4-turbo":   128_000,
	"gpt-4":         8_192,
	"gpt-3.5":       16_385,
	"gpt-5":         400_000,
	"o1":            200_000,
	"o3":            200_000,
	"o4":            200_000,
	"claude":        200_000,
	"gemini":        1_048_576,
	"deepseek":      128_000,
	"mistral-large": 128_000,
	"llama-3":       128_000,
	"qwen":          128_000,
}

// contextWindow is the window of the model a label ("provider/model" or
// "model") names.
func contextWindow(label string) int {
	name := strings.ToLower(label[strings.LastIndexByte(label, '/')+1:])
	best, size := 0, defaultContextWindow
	for prefix, n := range contextWindows {
		if strings.HasPrefix(name, prefix) && len(prefix) > best {
			best, size = len(prefix), n
		}
	}
	return size
}

// ContextFull is how full an agent's context window is, "ctx 12%"; "" when
// its size is not known yet.
func (p *Progress) ContextFull(name, model string) string {
	n, ok := p.context[name]
	if !ok || n <= 0 {
		return ""
	}
	pct := n * 100 / contextWindow(model)
	if pct == 0 {
		return "ctx <1%"
	}
	return fmt.Sprintf("ctx %d%%", pct)
}

// Ticked moves the spinner on: a TickMsg came.
func (p *Progress) Ticked() {
	p.ticking = false
	p.frame++
}

// Track notes when the lead (working while leadBusy) and each teammate
// began working, and forgets those that stopped. It runs on every message,
// so it allocates nothing.
func (p *Progress) Track(leadBusy bool, members []registry.Member) {
	for name := range p.since {
		if !busy(name, leadBusy, members) {
			delete(p.since, name)
		}
	}
	if leadBusy {
		p.begin(inbox.LeadName)
	}
	for _, mb := range members {
		if mb.Status == registry.StatusWorking {
			p.begin(mb.Name)
		}
	}
}

// busy reports whether an agent works now.
func busy(name string, leadBusy bool, members []registry.Member) bool {
	if name == inbox.LeadName {
		return leadBusy
	}
	for _, mb := range members {
		if mb.Name == name {
			return mb.Status == registry.StatusWorking
		}
	}
	return false
}

// Tick asks for the next frame when somebody works and none is on its
// way; none once the person quits.
func (p *Progress) Tick(quitting bool) tea.Cmd {
	if p.ticking || quitting || len(p.since) == 0 {
		return nil
	}
	p.ticking = true
	return tea.Tick(tickInterval, func(t time.Time) tea.Msg { return TickMsg(t) })
}

// LeadStatus is the lead's state in words: "idle", or "⠋ working 12s ·
// running bash" while it works (activity is what it does).
func (p *Progress) LeadStatus(leadBusy bool, activity string) string {
	if !leadBusy {
		return "idle"
	}
	s := "working"
	if w := p.Working(inbox.LeadName); w != "" {
		s = p.Spinner() + " working " + p.Elapsed(inbox.LeadName)
	}
	if activity != "" && activity != "thinking" {
		s += " · " + activity
	}
	return s
}

// MateWork is " · ⠋ working 12s · running bash" for a teammate while it
// works (activity is what it does), "" otherwise.
func (p *Progress) MateWork(name, activity string) string {
	if p.Working(name) == "" {
		return ""
	}
	s := " · " + p.Spinner() + " working " + p.Elapsed(name)
	if activity != "" && activity != "thinking" {
		s += " · " + activity
	}
	return s
}

// SetContext notes an agent's context size, the tokens of its last model
// call; 0 or less forgets it (a compaction makes it unknown).
func (p *Progress) SetContext(agent string, tokens int) {
	if tokens <= 0 {
		delete(p.context, agent)
		return
	}
	p.context[agent] = tokens
}
