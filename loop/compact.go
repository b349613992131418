package loop

import (
	"fmt"
	"slices"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// compactedNote begins the message that stands where earlier messages were
// dropped; a summary of what they held follows it.
const compactedNote = "[earlier conversation compacted to fit the model's context window"

// maxSummary bounds the summary of what was dropped, in bytes;
// summaryAllowance is the room compaction leaves for it when choosing
// what to keep.
const (
	maxSummary       = 3000
	summaryAllowance = 800
)

// stateTools are the calls whose effect the team's state depends on: a
// compacted conversation keeps each one in its summary, so the agent does
// not spawn alice twice or forget a task it made.
var stateTools = map[string]bool{
	"spawn_teammate": true, "shutdown_teammate": true, "merge_teammate": true, "handoff": true,
	"task_create": true, "task_update": true, "task_claim": true,
	"submit_plan": true, "review_plan": true, "review_permission": true, "respond_shutdown": true,
}

// Compact drops about the older half of the model's view of the
// conversation now, as compaction does when the window fills (the person's
// /compact): the task stays, the dropped messages become a summary that
// keeps the team's state, and the session file keeps every message. It
// returns how many messages were dropped (0 when there was too little).
func (a *Agent) Compact() int {
	dropped := a.conv.compact()
	if dropped > 0 {
		a.emit(Event{Kind: EventCompacted, Dropped: dropped})
	}
	return dropped
}

// compact drops about the older half of the conversation (the window is
// not known). It returns how many messages were dropped.
func (c *conversation) compact() int {
	c.mu.Lock()
	b := c.budget()
	total := b.fixed + b.msgTokens(c.msgs)
	c.mu.Unlock()
	dropped, _ := c.compactTo(total / 2)
	return dropped
}

// compactForReply compacts to what the window holds with room for the
// reply, or by half where the window is not known.
func (c *conversation) compactForReply() (dropped int, ok bool) {
	w := c.window()
	if w.size == 0 {
		return c.compact(), true
	}
	return c.compactTo(w.replyTarget(c.leastTokens()))
}

// leastTokens is what a compacted request cannot go below: the fixed part,
// the task and the summary's room.
func (c *conversation) leastTokens() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.budget().least(c.msgs)
}

// compactTo shrinks the model's view of the conversation to at most target
// tokens, as estimated (see budget.compact). The session keeps everything;
// only the model's view shrinks. ok is false when nothing could fit.
func (c *conversation) compactTo(target int) (dropped int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs, dropped, ok = c.budget().compact(c.msgs, target)
	return dropped, ok
}

// budget is what compaction reckons with now. The caller holds c.mu.
func (c *conversation) budget() budget {
	n := len(c.system) + len(c.extra)
	if c.tools != nil {
		n += c.tools.SchemaBytes()
	}
	return budget{fixed: c.win.tokens(n / 4), win: c.win}
}

// budget is what a compaction reckons with: the tokens every request
// carries besides the conversation (the system prompt and the tools'
// schemas), and the window, which scales the estimates.
type budget struct {
	fixed int
	win   window
}

// least is what a compacted request of msgs cannot go below: the fixed
// part, the task and the summary's room.
func (b budget) least(msgs []openai.ChatCompletionMessage) int {
	n := b.fixed + b.win.tokens(summaryAllowance/4)
	if len(msgs) > 0 && msgs[0].Role == openai.ChatMessageRoleUser {
		n += b.msgTokens(msgs[:1])
	}
	return n
}

// compact is msgs shrunk to at most target tokens, as estimated: the first
// user message (the task) stays, the oldest messages after it go, replaced
// by one message saying what they held, and the tail starts at a message
// that is not a tool answer, so no answer loses its call. When even the
// task and the last turn are too long, the longest of their texts are cut.
// ok is false when nothing could fit.
func (b budget) compact(msgs []openai.ChatCompletionMessage, target int) (out []openai.ChatCompletionMessage, dropped int, ok bool) {
	head := 0
	if len(msgs) > 0 && msgs[0].Role == openai.ChatMessageRoleUser {
		head = 1
	}
	last := len(msgs) - 1
	for last > head && msgs[last].Role == openai.ChatMessageRoleTool {
		last--
	}
	if last <= head {
		// Nothing to drop: the task, or one turn, is all there is.
		out = slices.Clone(msgs)
		ok = b.shrinkTexts(out, target)
		return out, 0, ok
	}
	sizes := make([]int, len(msgs))
	for i, m := range msgs {
		sizes[i] = b.win.tokens(estimateMessage(m))
	}
	// The summary's room: most summaries are a few lines; a longer one
	// is cut to fit by shrinkTexts' turn of the others.
	fixed := b.fixed + b.msgTokens(msgs[:head]) + b.win.tokens(summaryAllowance/4)
	tail := 0
	for _, n := range sizes[last:] {
		tail += n
	}
	// The earliest start whose tail fits; else the last turn alone.
	start := last
	for s, rest := head, tail+sum(sizes[head:last]); s <= last; s++ {
		if msgs[s].Role != openai.ChatMessageRoleTool && fixed+rest <= target {
			start = s
			break
		}
		rest -= sizes[s]
	}
	if start == head {
		return msgs, 0, true // it fits whole: nothing to drop
	}
	out = make([]openai.ChatCompletionMessage, 0, len(msgs)-start+head+1)
	out = append(out, msgs[:head]...)
	out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: summarize(msgs[head:start])})
	out = append(out, msgs[start:]...)
	ok = b.shrinkTexts(out, target)
	return out, start - head, ok
}

func sum(ns []int) int {
	t := 0
	for _, n := range ns {
		t += n
	}
	return t
}

// shrinkTexts cuts the longest texts of msgs until they fit target tokens
// with the fixed part; false when even cut they do not.
func (b budget) shrinkTexts(msgs []openai.ChatCompletionMessage, target int) bool {
	over := b.fixed + b.msgTokens(msgs) - target
	if over <= 0 {
		return true
	}
	order := make([]int, len(msgs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(x, y int) int { return len(msgs[y].Content) - len(msgs[x].Content) })
	const keep = 512 // bytes of a text that stay however it is cut
	for _, i := range order {
		m := &msgs[i]
		if over <= 0 || len(m.Content) <= keep || strings.HasPrefix(m.Content, compactedNote) {
			continue
		}
		cutBytes := min(len(m.Content)-keep, b.bytesFor(over)+64)
		m.Content = cutText(m.Content, len(m.Content)-cutBytes)
		over -= b.win.tokens(cutBytes / 4)
	}
	return over <= 0
}

// bytesFor is about how many bytes of text make n tokens.
func (b budget) bytesFor(n int) int {
	if b.win.ratio > 0 {
		return int(float64(n*4)/b.win.ratio) + 1
	}
	return n * 4
}

// cutText keeps the first n bytes of s (on a rune boundary) and says so.
func cutText(s string, n int) string {
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + fmt.Sprintf("\n[… %d bytes cut to fit the model's context window]", len(s)-n)
}

// estimateMessage is about how many tokens m is: a token is about four
// bytes of text; the servers' own count scales it (window.ratio).
func estimateMessage(m openai.ChatCompletionMessage) int {
	n := len(m.Content) + 16
	if len(m.ToolCalls) > 0 {
		n += len(m.ReasoningContent) // sent back only with tool calls
	}
	for _, tc := range m.ToolCalls {
		n += len(tc.Function.Name) + len(tc.Function.Arguments) + 24
	}
	return n / 4
}

// msgTokens is the estimate of msgs, scaled.
func (b budget) msgTokens(msgs []openai.ChatCompletionMessage) int {
	n := 0
	for _, m := range msgs {
		n += estimateMessage(m)
	}
	return b.win.tokens(n)
}

// summarize says what dropped held: every call the team's state depends
// on with its result, the rest counted by tool, and the messages taken in.
func summarize(dropped []openai.ChatCompletionMessage) string {
	return summarizeCount(dropped, len(dropped))
}

// summarizeCount is summarize saying count messages were dropped (an
// earlier summary among them stands for those it dropped).
func summarizeCount(dropped []openai.ChatCompletionMessage, count int) string {
	results := map[string]string{}
	for _, m := range dropped {
		if m.Role == openai.ChatMessageRoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	var lines []string
	others := map[string]int{}
	messages := 0
	for _, m := range dropped {
		switch {
		case strings.HasPrefix(m.Content, compactedNote):
			// An earlier summary: what it said still holds.
			if _, rest, ok := strings.Cut(m.Content, "\n"); ok {
				lines = append(lines, strings.Split(strings.TrimSuffix(rest, "]"), "\n")...)
			}
		case m.Role == openai.ChatMessageRoleUser:
			messages++
		case m.Role == openai.ChatMessageRoleAssistant:
			for _, tc := range m.ToolCalls {
				if !stateTools[tc.Function.Name] {
					others[tc.Function.Name]++
					continue
				}
				lines = append(lines, fmt.Sprintf("- you called %s %s → %s", tc.Function.Name,
					oneLine(tc.Function.Arguments, 200), oneLine(results[tc.ID], 160)))
			}
		}
	}
	if len(others) > 0 {
		names := make([]string, 0, len(others))
		for name := range others {
			names = append(names, name)
		}
		slices.Sort(names)
		var parts []string
		for _, name := range names {
			parts = append(parts, fmt.Sprintf("%s ×%d", name, others[name]))
		}
		lines = append(lines, "- other tool calls: "+strings.Join(parts, ", "))
	}
	if messages > 0 {
		lines = append(lines, fmt.Sprintf("- %d messages you had read", messages))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d earlier messages were dropped. What they held:", compactedNote, count)
	for i, l := range lines {
		if b.Len()+len(l) > maxSummary {
			fmt.Fprintf(&b, "\n- … and %d more lines", len(lines)-i)
			break
		}
		b.WriteString("\n" + l)
	}
	b.WriteString("]")
	return b.String()
}

// oneLine is s on one line, cut to n bytes.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}
