package panel

import (
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/mdrender"
	"github.com/agentteam/agentteam/internal/ui/tui/draw"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
)

// Team shows every teammate and the pool gauge.
type Team struct {
	Members    []registry.Member
	State      string // the registry's derived team state
	Unread     map[string]int
	Activity   map[string]string // live, from activity events; fresher than the registry's
	maxWorkers int
	LeadBusy   bool
	LeadTokens int
	Lead       *registry.LeadEntry // the lead's model and usage, from the registry
	LeadModel  string              // the lead's model as this process runs it
	Focus      string              // "" is the lead
	Prog       *Progress           // spinners, times at work and context sizes; nil shows none
	// Wrote sums each teammate's writes this screen saw (CountWrite): the
	// change of one that works in the workspace itself, with no branch.
	Wrote map[string]*WriteStat
	// Self is this process's worker id: teammates run by another say where.
	Self string
}

// NewTeam is the panel of a team of at most maxWorkers working at once.
func NewTeam(maxWorkers int) *Team {
	return &Team{Unread: map[string]int{}, Activity: map[string]string{}, maxWorkers: maxWorkers, Wrote: map[string]*WriteStat{}}
}

// gauge is "working 3/5, queued 2".
func (p *Team) gauge() string {
	working, queued := 0, 0
	for _, m := range p.Members {
		switch m.Status {
		case registry.StatusWorking:
			working++
		case registry.StatusQueued:
			queued++
		}
	}
	return fmt.Sprintf("working %d/%d, queued %d", working, p.maxWorkers, queued)
}

// doing is what a teammate does now, in words.
func (p *Team) doing(m registry.Member) string {
	switch m.Status {
	case registry.StatusWorking:
		if a := p.Activity[m.Name]; a != "" {
			return a
		}
		if m.Activity != "" {
			return m.Activity
		}
		return "thinking"
	case registry.StatusQueued:
		return "waiting for a worker"
	case registry.StatusIdle:
		return "waiting for messages"
	case registry.StatusFailed:
		return engine.FirstLine(m.Error, 60)
	}
	return ""
}

// Render returns exactly h lines of at most w cells.
func (p *Team) Render(st draw.Styles, w, h int) []string {
	if h <= 0 {
		return nil
	}
	lines := []string{st.Header.Render("Team") + st.Dim.Render("  "+p.teamState()+" · "+p.gauge())}
	leadState := "idle"
	if p.LeadBusy {
		leadState = "working"
		if a := p.Activity["lead"]; a != "" {
			leadState = a
		}
		if p.Prog != nil {
			leadState = strings.TrimSpace(p.Prog.Working("lead") + " " + leadState)
		}
	}
	lead := fmt.Sprintf("%s %s", p.marker(""), st.Who.Render("lead"))
	// This process's own word first: the registry's may be an earlier run's.
	model := p.LeadModel
	if model == "" && p.Lead != nil {
		model = p.Lead.Model
	}
	if model != "" {
		lead += st.Dim.Render(" · " + model)
	}
	lead += " " + st.Dim.Render(leadState)
	if c := p.contextFull("lead", model); c != "" {
		lead += st.Dim.Render(" · " + c)
	}
	if p.LeadTokens > 0 {
		lead += st.Dim.Render(" · " + draw.Tokens(p.LeadTokens) + " tok")
	}
	if p.Lead != nil && p.Lead.Cost != nil && p.Lead.Tokens > 0 {
		lead += st.Dim.Render(" · cost " + models.FormatCost(p.Lead.Cost))
	}
	if n := p.Unread["lead"]; n > 0 {
		lead += st.Dim.Render(fmt.Sprintf(" · ✉ %d", n))
	}
	lines = append(lines, lead)
	room := h - len(lines)
	shown := p.Members
	if len(shown) > room {
		// The rows that fit, the focused teammate's among them.
		n, start := max(room-1, 0), 0
		for i, m := range p.Members {
			if m.Name == p.Focus && n > 0 && i >= n {
				start = i - n + 1
			}
		}
		shown = shown[start : start+n]
	}
	for _, m := range shown {
		lines = append(lines, p.Row(st, m, w))
	}
	if len(shown) < len(p.Members) && room > 0 {
		lines = append(lines, st.Dim.Render(fmt.Sprintf("  … %d more (/team)", len(p.Members)-len(shown))))
	}
	if len(p.Members) == 0 && room > 0 {
		lines = append(lines, st.Dim.Render("  no teammates yet"))
	}
	return draw.Fit(lines, w, h)
}

func (p *Team) marker(name string) string {
	if p.Focus == name {
		return "›"
	}
	return " "
}

// Row is one teammate: symbol (a spinner while it works) and status
// (readable without colour), time at work, name, role, what it does, model,
// context, turns, tokens, cost, unread. When that is too wide, the turns and
// then what it does give way to the model and cost, then the time at work.
func (p *Team) Row(st draw.Styles, m registry.Member, w int) string {
	line := p.rowWith(st, m, true, true, true)
	if m.Model != "" && draw.Width(line) > w {
		line = p.rowWith(st, m, true, false, true)
	}
	if m.Model != "" && draw.Width(line) > w {
		line = p.rowWith(st, m, false, false, true)
	}
	if draw.Width(line) > w {
		line = p.rowWith(st, m, m.Model == "", m.Model == "", false)
	}
	return draw.Clip(line, w)
}

func (p *Team) rowWith(st draw.Styles, m registry.Member, doing, turns, elapsed bool) string {
	ss := st.StatusStyle(m.Status)
	var b strings.Builder
	b.WriteString(p.marker(m.Name))
	symbol := draw.StatusSymbol(m.Status)
	if p.Prog != nil && p.Prog.Working(m.Name) != "" {
		symbol = p.Prog.Spinner()
	}
	b.WriteString(ss.Render(symbol))
	b.WriteString(" ")
	name := st.Who.Render(m.Name)
	if p.Focus == m.Name {
		name = st.Focus.Render(m.Name)
	}
	b.WriteString(name)
	b.WriteString(st.Dim.Render(" " + mdrender.Sanitize(m.Role) + " ")) // a role is the model's words
	b.WriteString(ss.Render(string(m.Status)))
	if p.Prog != nil && elapsed {
		if e := p.Prog.Elapsed(m.Name); e != "" {
			b.WriteString(ss.Render(" " + e))
		}
	}
	if where := p.where(m); where != "" {
		b.WriteString(st.Dim.Render(" on " + where))
	}
	plan := planLabel(m)
	if plan != "" {
		b.WriteString(" · " + st.Plan.Render(plan))
	}
	if br := branchLabel(m); br != "" {
		b.WriteString(st.Dim.Render(" · " + br))
	} else if ws := p.Wrote[m.Name]; ws != nil {
		b.WriteString(st.Dim.Render(" · " + ws.label()))
	}
	// A teammate idle on its plan waits for the review, not for any message.
	if d := p.doing(m); doing && d != "" && !(m.PlanState == registry.PlanAwaitingApproval && m.Status == registry.StatusIdle) {
		b.WriteString(st.Dim.Render(" · " + d))
	}
	var nums []string
	if c := p.contextFull(m.Name, m.Model); c != "" {
		nums = append(nums, c) // before the model: the row's end gives way first
	}
	if m.Model != "" {
		nums = append(nums, m.Model)
	}
	if turns && m.Turns > 0 {
		nums = append(nums, draw.Plural(m.Turns, "turn"))
	}
	if m.Tokens > 0 {
		nums = append(nums, draw.Tokens(m.Tokens)+" tok")
		if m.Cost != nil {
			nums = append(nums, "cost "+models.FormatCost(m.Cost))
		}
	}
	if n := p.Unread[m.Name]; n > 0 {
		nums = append(nums, fmt.Sprintf("✉ %d", n))
	}
	if len(nums) > 0 {
		b.WriteString(st.Dim.Render(" · " + strings.Join(nums, " · ")))
	}
	return b.String()
}

// where is the worker that runs a teammate, when it is not this process:
// its id, and its host unless the id names it already (HOST-PID).
func (p *Team) where(m registry.Member) string {
	if m.Worker == "" || m.Worker == p.Self {
		return ""
	}
	return team.WorkerPlace(m.Worker, m.Host)
}

// branchLabel is a worktree teammate's branch (agentteam/NAME) and its
// change, short: "branch +3 -1 (2 files)", "branch merged".
func branchLabel(m registry.Member) string {
	switch {
	case m.Branch == "":
		return ""
	case m.Merged:
		return "branch merged"
	case m.Diffstat == "":
		return "branch"
	}
	return "branch " + shortStat(m.Diffstat)
}

// shortStat turns git's "2 files changed, 3 insertions(+), 1 deletion(-)"
// into "+3 -1 (2 files)".
func shortStat(s string) string {
	var files, ins, del int
	for _, part := range strings.Split(s, ",") {
		var n int
		var word string
		if _, err := fmt.Sscanf(strings.TrimSpace(part), "%d %s", &n, &word); err != nil {
			continue
		}
		switch {
		case strings.HasPrefix(word, "file"):
			files = n
		case strings.HasPrefix(word, "insertion"):
			ins = n
		case strings.HasPrefix(word, "deletion"):
			del = n
		}
	}
	return fmt.Sprintf("+%d -%d (%s)", ins, del, draw.Plural(files, "file"))
}

// Names is the focus cycle: the lead, then every teammate.
func (p *Team) Names() []string {
	out := []string{""}
	for _, m := range p.Members {
		out = append(out, m.Name)
	}
	return out
}

// teamState is the registry's derived state, or derived here from the
// members shown when the registry has none yet.
func (p *Team) teamState() string {
	s := p.State
	if s == "" {
		s = registry.DeriveState(p.Members)
	}
	if s == registry.StateCompleted && planWaits(p.Members) {
		return "awaiting plan approval" // not done: a teammate waits for the lead or the person
	}
	return s
}

// planWaits reports whether a teammate's plan awaits approval.
func planWaits(members []registry.Member) bool {
	for _, m := range members {
		if m.PlanMode && m.PlanState == registry.PlanAwaitingApproval && m.Status != registry.StatusShutdown && m.Status != registry.StatusFailed {
			return true
		}
	}
	return false
}

// planLabels say where a plan-mode teammate's plan stands.
var planLabels = map[registry.PlanState]string{
	registry.PlanDrafting:         "✎ drafting a plan",
	registry.PlanAwaitingApproval: "⏸ plan awaiting approval",
	registry.PlanApproved:         "✓ plan approved",
	registry.PlanRejected:         "↺ plan rejected",
}

func planLabel(m registry.Member) string {
	if m.PlanState == "" {
		return ""
	}
	if l, ok := planLabels[m.PlanState]; ok {
		return l
	}
	return "plan " + string(m.PlanState)
}

// contextFull is how full an agent's context window is, "" when unknown.
func (p *Team) contextFull(name, model string) string {
	if p.Prog == nil {
		return ""
	}
	return p.Prog.ContextFull(name, model)
}

// WriteStat is what one teammate's writes changed, summed.
type WriteStat struct {
	files    map[string]bool
	add, del int
}

// label is "wrote +12 -4 (3 files)", as the team panel shows a branch's change.
func (w *WriteStat) label() string {
	return fmt.Sprintf("wrote +%d -%d (%s)", w.add, w.del, draw.Plural(len(w.files), "file"))
}

// Find is the index of the teammate named name, -1 if there is none.
func (p *Team) Find(name string) int {
	for i, mb := range p.Members {
		if mb.Name == name {
			return i
		}
	}
	return -1
}

// TeammateNames are the registry's teammates, for completion and focus.
func (p *Team) TeammateNames() []string {
	names := make([]string, 0, len(p.Members))
	for _, mb := range p.Members {
		names = append(names, mb.Name)
	}
	return names
}

// PlanNames are the teammates whose plan waits for review.
func (p *Team) PlanNames() []string {
	var names []string
	for _, mb := range p.Members {
		if mb.PlanState == registry.PlanAwaitingApproval {
			names = append(names, mb.Name)
		}
	}
	return names
}

// MemberDesc is a teammate's role and status for the pop-up; "" for other words.
func (p *Team) MemberDesc(name string) string {
	if i := p.Find(name); i >= 0 {
		mb := p.Members[i]
		return mb.Role + " · " + string(mb.Status)
	}
	return ""
}

// CountWrite adds a teammate's write of path, add lines added and del
// removed, to its sum.
func (p *Team) CountWrite(agent, path string, add, del int) {
	w := p.Wrote[agent]
	if w == nil {
		w = &WriteStat{files: map[string]bool{}}
		p.Wrote[agent] = w
	}
	w.files[path] = true
	w.add += add
	w.del += del
}
