package demo

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// reactiveTools are calls the lead makes on its own (not for one of the
// person's commands), so they do not count as commands carried out.
var reactiveTools = map[string]bool{"review_plan": true}

// reviewPending approves the first plan request in the conversation that
// has no review_plan call yet; ok is false when none waits.
func reviewPending(req openai.ChatCompletionRequest) (answer, bool) {
	if !hasTool(req, "review_plan") {
		return answer{}, false
	}
	reviewed := map[string]bool{}
	for _, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == "review_plan" {
				reviewed[requestID(tc)] = true
			}
		}
	}
	for _, m := range req.Messages {
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		for _, b := range blocks(text(m)) {
			if b.Type != "plan_approval_request" || b.CorrelationID == "" || reviewed[b.CorrelationID] {
				continue
			}
			args := map[string]any{"request_id": b.CorrelationID, "approve": true, "feedback": "Looks good; go ahead."}
			return answer{calls: []openai.ToolCall{toolCall(req.Messages, "review_plan", args)}}, true
		}
	}
	return answer{}, false
}

// requestID is the request_id argument of a protocol call.
func requestID(tc openai.ToolCall) string {
	var a struct {
		RequestID string `json:"request_id"`
	}
	if json.Unmarshal([]byte(tc.Function.Arguments), &a) != nil {
		return ""
	}
	return a.RequestID
}

// reviewLine says what a review_plan call did.
func reviewLine(tc openai.ToolCall, result string) string {
	if failed(result) {
		return fmt.Sprintf("could not review plan %s: %s", requestID(tc), firstLine(result))
	}
	return fmt.Sprintf("reviewed plan %s: %s", requestID(tc), firstLine(result))
}

// commandCalls are the tool calls after index from made for the person's
// commands, with their results and the index of the last message holding one.
func commandCalls(msgs []openai.ChatCompletionMessage, from int) (calls []openai.ToolCall, results map[string]string, last int) {
	results = map[string]string{}
	last = -1
	for i := from + 1; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case openai.ChatMessageRoleAssistant:
			for _, tc := range m.ToolCalls {
				if !reactiveTools[tc.Function.Name] {
					calls = append(calls, tc)
					last = i
				}
			}
		case openai.ChatMessageRoleTool:
			results[m.ToolCallID] = text(m)
		}
	}
	return calls, results, last
}

// reported tells whether a teammate sent a result after index from that
// says word ("" for any result).
func reported(msgs []openai.ChatCompletionMessage, from int, name, word string) bool {
	for _, m := range msgs[from+1:] {
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		for _, b := range blocks(text(m)) {
			if b.From == name && b.Type == "result" && strings.Contains(b.Content, word) {
				return true
			}
		}
	}
	return false
}

// waiting ends the lead's turn while a command waits for a teammate's
// work: what was done so far the first time, only what is new after that.
func waiting(msgs []openai.ChatCompletionMessage, p, done int, cmds []command, calls []openai.ToolCall, results map[string]string, next command) answer {
	wait := fmt.Sprintf("I will %s once %s has reported its work.", next.what, next.after)
	if done > p {
		if a := progress(msgs, done, cmds); a.content != nothingNew {
			wait = a.content + "\n\n" + wait
		}
		return answer{content: wait}
	}
	var sb strings.Builder
	sb.WriteString("Here is what I did:")
	summarise(&sb, cmds, calls, results)
	sb.WriteString("\n\n")
	if r := teamSoFar(msgs, p); len(r) > 0 {
		sb.WriteString(teamSaid + "\n" + bullets(r) + "\n\n")
	}
	sb.WriteString(wait)
	return answer{content: sb.String()}
}
