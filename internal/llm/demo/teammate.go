package demo

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// forwardRe is the instruction the lead's `tell NAME to message OTHER: TEXT` sends.
var forwardRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)^message\s+([^\s:]+)\s*:\s*(.*)$`) })

// The work a task may ask of a teammate, one tool call each, so that the
// demo shows what a real model's work looks like: `write FILE: TEXT` (the
// file's diff in the TUI) and `run: COMMAND` (in ask mode, the person's
// y / a / n).
var (
	writeRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)^write\s+([^\s:]+)\s*:\s*(.*)$`) })
	runRe   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)^run\s*:\s*(.+)$`) })
)

// workFor is the call task asks for, if any ("" for none).
func workFor(req openai.ChatCompletionRequest, task string) (string, map[string]any) {
	task = strings.TrimSpace(task)
	if m := writeRe().FindStringSubmatch(task); m != nil && hasTool(req, "write_file") {
		return "write_file", map[string]any{"path": m[1], "content": strings.TrimSpace(m[2]) + "\n"}
	}
	if m := runRe().FindStringSubmatch(task); m != nil && hasTool(req, "bash") {
		return "bash", map[string]any{"command": strings.TrimSpace(m[1])}
	}
	return "", nil
}

// workAck is the part of the reply about task's work, given its result.
func workAck(task, res string) (string, bool) {
	task = strings.TrimSpace(task)
	if m := writeRe().FindStringSubmatch(task); m != nil {
		if failed(res) || strings.HasPrefix(res, "permission denied") {
			return "could not write " + m[1] + ": " + clip(res, 120), true
		}
		return "wrote " + m[1], true
	}
	if m := runRe().FindStringSubmatch(task); m != nil {
		cmd := strings.TrimSpace(m[1])
		if failed(res) || strings.HasPrefix(res, "permission denied") {
			return "could not run `" + clip(cmd, 60) + "`: " + clip(res, 120), true
		}
		// The bash tool's result starts with its exit code; 0 goes without saying.
		out, ok := strings.CutPrefix(strings.TrimSpace(res), "exit code: 0\n")
		if !ok {
			out = res
		}
		return "ran `" + clip(cmd, 60) + "`: " + clip(oneLine(out), 120), true
	}
	return "", false
}

// oneLine is s on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// maxReply keeps a teammate's final reply short.
const maxReply = 299

// item is one inbox block a teammate has to handle this cycle.
type item struct {
	block
	spawn bool // the spawn prompt: the first message of the conversation
}

// step is one tool call a teammate makes for an item, one per turn.
type step struct {
	item int
	tool string
	args map[string]any
}

// teammateTurn decides a teammate's next model turn: make the calls its new
// messages ask for (a plan to submit, a shutdown to answer, a message to
// forward), one per turn, then acknowledge everything in one reply.
func teammateTurn(req openai.ChatCompletionRequest, name, role string) answer {
	msgs := req.Messages
	done := lastAnswer(msgs)
	items := newItems(msgs, done)
	planMode := hasTool(req, "submit_plan")
	var steps []step
	for i, it := range items {
		if tool, args := stepFor(req, it, planMode, spawnTask(msgs)); tool != "" {
			steps = append(steps, step{item: i, tool: tool, args: args})
		}
	}
	turns, calls, results := callTurns(msgs, done)
	if turns < len(steps) {
		return answer{calls: []openai.ToolCall{toolCall(msgs, steps[turns].tool, steps[turns].args)}}
	}
	resultOf := map[int]string{}
	for i, s := range steps {
		res := "error: " + s.tool + " is not available to me"
		if i < len(calls) {
			res = results[calls[i].ID]
		}
		resultOf[s.item] = res
	}
	var parts []string
	for i, it := range items {
		parts = append(parts, ackFor(it, planMode, resultOf[i], spawnTask(msgs)))
	}
	if len(parts) == 0 {
		parts = []string{"nothing new."}
	}
	return answer{content: clip(fmt.Sprintf("%s (%s): %s", name, role, strings.Join(parts, "; ")), maxReply)}
}

// stepFor is the call an item needs, if any: "" when it needs none.
func stepFor(req openai.ChatCompletionRequest, it item, planMode bool, task string) (string, map[string]any) {
	switch {
	case it.Type == "shutdown_request" && hasTool(req, "respond_shutdown"):
		return "respond_shutdown", map[string]any{"request_id": it.CorrelationID, "approve": true}
	case it.spawn && planMode:
		return "submit_plan", map[string]any{"plan": planFor(task)}
	case it.Type == "plan_approval_response" && !approved(it) && planMode:
		return "submit_plan", map[string]any{"plan": planFor(task) + "\n(revised after your feedback: " + clip(it.Content, 200) + ")"}
	case it.spawn || it.Type == "plan_approval_response" && approved(it):
		// The work starts at once, or once the plan is approved.
		if tool, args := workFor(req, task); tool != "" {
			return tool, args
		}
	}
	if m := forwardRe().FindStringSubmatch(it.Content); m != nil && hasTool(req, "send_message") {
		return "send_message", map[string]any{"to": m[1], "content": strings.TrimSpace(m[2])}
	}
	return "", nil
}

// ackFor is the part of the final reply about one item; res is the result
// of its call, if it needed one.
func ackFor(it item, planMode bool, res, task string) string {
	switch {
	case it.Type == "shutdown_request":
		if failed(res) {
			return "could not answer the shutdown request: " + clip(res, 120)
		}
		return "shutting down as asked"
	case it.spawn && planMode:
		if failed(res) {
			return "could not submit my plan: " + clip(res, 120)
		}
		return "plan submitted, waiting for the lead's approval"
	case it.Type == "plan_approval_response" && approved(it):
		if work, ok := workAck(task, res); ok {
			return planApprovedAck + " — " + work
		}
		return planApprovedAck + " — done: " + clip(task, 120)
	case it.spawn:
		if work, ok := workAck(task, res); ok {
			return "ready — " + work
		}
	case it.Type == "plan_approval_response" && planMode:
		if failed(res) {
			return "plan rejected, and I could not submit a revised one: " + clip(res, 120)
		}
		return "plan rejected — revised plan submitted"
	}
	if m := forwardRe().FindStringSubmatch(it.Content); m != nil {
		part := fmt.Sprintf("sent to %s: %s", m[1], strings.TrimSpace(m[2]))
		if failed(res) {
			part = fmt.Sprintf("could not message %s: %s", m[1], clip(res, 120))
		}
		if it.spawn {
			part = "ready — " + part
		}
		return part
	}
	switch {
	case it.spawn:
		return "ready — " + it.Content
	case it.Type == "broadcast":
		return fmt.Sprintf("received broadcast from %s: %s", it.From, it.Content)
	}
	return fmt.Sprintf("received from %s: %s", it.From, it.Content)
}

// planApprovedAck starts a plan-mode teammate's report of the approved
// work; the demo lead waits for it before a shutdown it was asked for.
const planApprovedAck = "plan approved"

// planFor is the demo's plan for a task: short, as the brief asks.
func planFor(task string) string {
	return "1. read the task: " + clip(task, 120) + "\n2. do it\n3. report to the lead"
}

// approved reads a plan_approval_response.
func approved(it item) bool { return strings.Contains(it.Content, "approved your plan") }

// spawnTask is the teammate's first message: the task it was spawned with.
func spawnTask(msgs []openai.ChatCompletionMessage) string {
	if items := newItems(msgs, -1); len(items) > 0 && items[0].spawn {
		return items[0].Content
	}
	return ""
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
