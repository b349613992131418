package demo

import (
	"fmt"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// forwardRe is the instruction the lead's `tell NAME to message OTHER: TEXT` sends.
var forwardRe = regexp.MustCompile(`(?is)^message\s+([^\s:]+)\s*:\s*(.*)$`)

// maxReply keeps a teammate's final reply short.
const maxReply = 299

// item is one inbox block a teammate has to handle this cycle.
type item struct {
	block
	spawn bool // the spawn prompt: the first message of the conversation
}

// teammateTurn decides a teammate's next model turn: forward what it was
// told to forward, one send_message per turn, then acknowledge everything.
func teammateTurn(req openai.ChatCompletionRequest, name, role string) answer {
	msgs := req.Messages
	done := lastAnswer(msgs)
	items := newItems(msgs, done)
	type forward struct{ to, content string }
	var forwards []forward
	for _, it := range items {
		if m := forwardRe.FindStringSubmatch(it.Content); m != nil {
			forwards = append(forwards, forward{m[1], strings.TrimSpace(m[2])})
		}
	}
	turns, calls, results := callTurns(msgs, done)
	if turns < len(forwards) && hasTool(req, "send_message") {
		f := forwards[turns]
		return answer{calls: []openai.ToolCall{toolCall(msgs, "send_message", map[string]string{"to": f.to, "content": f.content})}}
	}
	var parts []string
	sent := 0
	for _, it := range items {
		var part string
		if m := forwardRe.FindStringSubmatch(it.Content); m != nil {
			res := "error: send_message is not available to me"
			if sent < len(calls) {
				res = results[calls[sent].ID]
			}
			sent++
			if failed(res) {
				part = fmt.Sprintf("could not message %s: %s", m[1], clip(res, 120))
			} else {
				part = fmt.Sprintf("sent to %s: %s", m[1], strings.TrimSpace(m[2]))
			}
			if it.spawn {
				part = "ready — " + part
			}
		} else if it.spawn {
			part = "ready — " + it.Content
		} else if it.Type == "broadcast" {
			part = fmt.Sprintf("received broadcast from %s: %s", it.From, it.Content)
		} else {
			part = fmt.Sprintf("received from %s: %s", it.From, it.Content)
		}
		parts = append(parts, part)
	}
	if len(parts) == 0 {
		parts = []string{"nothing new."}
	}
	return answer{content: clip(fmt.Sprintf("%s (%s): %s", name, role, strings.Join(parts, "; ")), maxReply)}
}

// newItems are the inbox blocks after index from; a plain user message
// counts as a message from the person.
func newItems(msgs []openai.ChatCompletionMessage, from int) []item {
	firstUser := -1
	for i, m := range msgs {
		if m.Role == openai.ChatMessageRoleUser {
			firstUser = i
			break
		}
	}
	var out []item
	for i := from + 1; i < len(msgs); i++ {
		if msgs[i].Role != openai.ChatMessageRoleUser {
			continue
		}
		s := text(msgs[i])
		bs := blocks(s)
		if bs == nil {
			bs = []block{{From: "user", Type: "message", Content: strings.TrimSpace(s)}}
		}
		for j, b := range bs {
			out = append(out, item{block: b, spawn: i == firstUser && j == 0})
		}
	}
	return out
}
