package tui

import (
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/workspace"
)

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

// contextFrom takes each agent's context size from its replies: a model
// call's tokens (prompt and completion) are the conversation's size as the
// model saw it. A compaction makes the size unknown until the next reply.
func (m *Model) contextFrom(b batchMsg) {
	for _, it := range b.items {
		if it.event == nil {
			continue
		}
		switch p := it.event.Payload.(type) {
		case team.Reply:
			if p.Tokens > 0 {
				m.prog.context[it.event.Agent] = p.Tokens
			}
		case team.Compacted:
			delete(m.prog.context, it.event.Agent)
		}
	}
}

// contextFull is how full an agent's context window is, "ctx 12%"; "" when
// its size is not known yet.
func (p *progress) contextFull(name, model string) string {
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

// focusName is the agent whose conversation is shown.
func (m *Model) focusName() string {
	if m.focus == "" {
		return workspace.LeadName
	}
	return m.focus
}

// focusModel is the model label of the agent whose conversation is shown.
func (m *Model) focusModel() string {
	if m.focus == "" {
		return m.opts.ModelName
	}
	if i := m.findMember(m.focus); i >= 0 {
		return m.team.members[i].Model
	}
	return ""
}
