package demo

import (
	"html"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

var (
	blockRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<message\s+([^>]*)>\n?(.*?)\n?</message>`) })
	attrRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([A-Za-z_]+)="([^"]*)"`) })
	nameRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*Your name:\s*(\S+)`) })
	roleRe  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*Your role:\s*(.+?)\s*$`) })
)

// block is one inbox message as it appears in a conversation.
type block struct {
	From, Type, Content string
	// CorrelationID is a protocol message's request id.
	CorrelationID string
}

// blocks parses the inbox blocks of a user message; a message without any
// is a plain one and gives nil.
func blocks(content string) []block {
	var out []block
	for _, m := range blockRe().FindAllStringSubmatch(content, -1) {
		b := block{Type: "message", Content: strings.TrimSpace(m[2])}
		for _, a := range attrRe().FindAllStringSubmatch(m[1], -1) {
			switch a[1] {
			case "from":
				b.From = html.UnescapeString(a[2])
			case "type":
				b.Type = html.UnescapeString(a[2])
			case "correlation_id":
				b.CorrelationID = html.UnescapeString(a[2])
			}
		}
		out = append(out, b)
	}
	return out
}

// text is a message's text, whether plain or in parts.
func text(m openai.ChatCompletionMessage) string {
	if m.Content != "" || len(m.MultiContent) == 0 {
		return m.Content
	}
	var sb strings.Builder
	for _, p := range m.MultiContent {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// identity reads a teammate's name and role from its system prompt.
func identity(msgs []openai.ChatCompletionMessage) (name, role string) {
	for _, m := range msgs {
		if m.Role != openai.ChatMessageRoleSystem {
			continue
		}
		s := text(m)
		if n := nameRe().FindStringSubmatch(s); n != nil && name == "" {
			name = n[1]
		}
		if r := roleRe().FindStringSubmatch(s); r != nil && role == "" {
			role = r[1]
		}
	}
	return name, role
}

// lastAnswer is the index of the last assistant message without tool calls
// (the end of the previous cycle), or -1.
func lastAnswer(msgs []openai.ChatCompletionMessage) int {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == openai.ChatMessageRoleAssistant && len(msgs[i].ToolCalls) == 0 {
			return i
		}
	}
	return -1
}

// callTurns returns the assistant tool calls after index from, in order,
// with the text of each call's tool result ("" if none yet).
func callTurns(msgs []openai.ChatCompletionMessage, from int) (turns int, calls []openai.ToolCall, results map[string]string) {
	results = map[string]string{}
	for _, m := range msgs[from+1:] {
		switch {
		case m.Role == openai.ChatMessageRoleAssistant && len(m.ToolCalls) > 0:
			turns++
			calls = append(calls, m.ToolCalls...)
		case m.Role == openai.ChatMessageRoleTool:
			results[m.ToolCallID] = text(m)
		}
	}
	return turns, calls, results
}

// hasTool reports whether the request declares the named tool.
func hasTool(req openai.ChatCompletionRequest, name string) bool {
	for _, t := range req.Tools {
		if t.Function != nil && t.Function.Name == name {
			return true
		}
	}
	return false
}

// failed reports whether a tool result reads as an error.
func failed(result string) bool {
	r := strings.ToLower(strings.TrimSpace(result))
	return strings.HasPrefix(r, "error") || strings.HasPrefix(r, "refused")
}

// clip shortens s to at most n bytes on a character boundary, marking the cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
