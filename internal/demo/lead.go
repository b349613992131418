package demo

import (
	"fmt"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// The phrases the demo lead understands, one command each.
var (
	spawnRe     = regexp.MustCompile(`(?is)^spawn\s+(\S+)\s+as\s+(.+?)(?:\s+to\s+(.+))?$`)
	tellRe      = regexp.MustCompile(`(?is)^tell\s+(\S+)\s+to\s+message\s+([^\s:]+)\s*:\s*(.*)$`)
	sendRe      = regexp.MustCompile(`(?is)^send\s+([^\s:]+)\s*:\s*(.*)$`)
	broadcastRe = regexp.MustCompile(`(?is)^broadcast\s*:\s*(.*)$`)
	listRe      = regexp.MustCompile(`(?i)^list\s+team$`)
	readRe      = regexp.MustCompile(`(?i)^read\s+inbox$`)
)

const defaultSpawnPrompt = "Say hello to the lead and report what you can do."

const help = "I am the offline demo model. I understand: " +
	"`spawn NAME as ROLE` (optionally `to TASK`), `tell NAME to message OTHER: TEXT`, " +
	"`send NAME: TEXT`, `broadcast: TEXT`, `list team`, `read inbox`. " +
	"Separate commands with `;` or new lines."

// command is one understood phrase, as the tool call that carries it out.
type command struct {
	tool string
	args map[string]string
	what string // "spawn alice as coder": for the summary
	show bool   // the summary quotes the tool's output
}

// parseCommands splits a person's prompt into commands; unknown holds the
// parts it did not understand.
func parseCommands(prompt string) (cmds []command, unknown []string) {
	for _, part := range strings.FieldsFunc(prompt, func(r rune) bool { return r == ';' || r == '\n' }) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if c, ok := parseCommand(part); ok {
			cmds = append(cmds, c)
		} else {
			unknown = append(unknown, part)
		}
	}
	return cmds, unknown
}

func parseCommand(s string) (command, bool) {
	if m := spawnRe.FindStringSubmatch(s); m != nil {
		prompt := strings.TrimSpace(m[3])
		if prompt == "" {
			prompt = defaultSpawnPrompt
		}
		role := strings.TrimSpace(m[2])
		return command{tool: "spawn_teammate", args: map[string]string{"name": m[1], "role": role, "prompt": prompt},
			what: fmt.Sprintf("spawn %s as %s", m[1], role)}, true
	}
	if m := tellRe.FindStringSubmatch(s); m != nil {
		return command{tool: "send_message", args: map[string]string{"to": m[1], "content": fmt.Sprintf("message %s: %s", m[2], m[3])},
			what: fmt.Sprintf("ask %s to message %s", m[1], m[2])}, true
	}
	if m := sendRe.FindStringSubmatch(s); m != nil {
		return command{tool: "send_message", args: map[string]string{"to": m[1], "content": m[2]},
			what: "send " + m[1] + " a message"}, true
	}
	if m := broadcastRe.FindStringSubmatch(s); m != nil {
		return command{tool: "broadcast", args: map[string]string{"content": m[1]}, what: "broadcast to the team"}, true
	}
	if listRe.MatchString(s) {
		return command{tool: "list_teammates", args: map[string]string{}, what: "list the team", show: true}, true
	}
	if readRe.MatchString(s) {
		return command{tool: "read_inbox", args: map[string]string{}, what: "read my inbox", show: true}, true
	}
	return command{}, false
}

// latestPrompt finds the person's latest prompt: a plain user message, or
// an inbox block from "user". It returns -1 when there is none.
func latestPrompt(msgs []openai.ChatCompletionMessage) (int, string) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != openai.ChatMessageRoleUser {
			continue
		}
		s := text(msgs[i])
		bs := blocks(s)
		if bs == nil {
			return i, s
		}
		for j := len(bs) - 1; j >= 0; j-- {
			if bs[j].From == "user" {
				return i, bs[j].Content
			}
		}
	}
	return -1, ""
}

// leadTurn decides the lead's next model turn.
func leadTurn(req openai.ChatCompletionRequest) answer {
	msgs := req.Messages
	p, prompt := latestPrompt(msgs)
	done := lastAnswer(msgs)
	if p < 0 || p < done {
		// The person's prompt is answered: whatever is new came from teammates.
		if r := reports(msgs, done); r != "" {
			return answer{content: r}
		}
		return answer{content: "Nothing new from the team. " + help}
	}
	cmds, unknown := parseCommands(prompt)
	if len(cmds) == 0 {
		if len(unknown) == 0 {
			return answer{content: help}
		}
		return answer{content: fmt.Sprintf("I did not understand %q. %s", clip(strings.Join(unknown, "; "), 120), help)}
	}
	turns, calls, results := callTurns(msgs, p)
	if turns < len(cmds) {
		c := cmds[turns]
		if !hasTool(req, c.tool) {
			return answer{content: fmt.Sprintf("I cannot %s: the tool %s is not available to me.", c.what, c.tool)}
		}
		return answer{calls: []openai.ToolCall{toolCall(msgs, c.tool, c.args)}}
	}
	var sb strings.Builder
	sb.WriteString("Here is what I did:")
	for i, c := range cmds {
		res := ""
		if i < len(calls) {
			res = results[calls[i].ID]
		}
		switch {
		case failed(res):
			fmt.Fprintf(&sb, "\n- could not %s: %s", c.what, clip(res, 200))
		case c.show:
			fmt.Fprintf(&sb, "\n- %s:\n%s", c.what, clip(res, 1200))
		default:
			fmt.Fprintf(&sb, "\n- %s: done", c.what)
		}
	}
	if len(unknown) > 0 {
		fmt.Fprintf(&sb, "\nI did not understand %q.", clip(strings.Join(unknown, "; "), 120))
	}
	if r := reports(msgs, p); r != "" {
		sb.WriteString("\n" + r)
	}
	return answer{content: sb.String()}
}

// reports summarises the teammates' inbox blocks after index from.
func reports(msgs []openai.ChatCompletionMessage, from int) string {
	var lines []string
	for _, m := range msgs[from+1:] {
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		for _, b := range blocks(text(m)) {
			if b.From == "user" {
				continue
			}
			verb := "says"
			switch b.Type {
			case "result":
				verb = "reports"
			case "error":
				verb = "failed"
			case "broadcast":
				verb = "broadcasts"
			}
			lines = append(lines, fmt.Sprintf("%s %s: %s", b.From, verb, clip(b.Content, 300)))
		}
	}
	return strings.Join(lines, "\n")
}
