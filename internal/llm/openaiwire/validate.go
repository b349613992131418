package openaiwire

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// toolName is what the real service accepts as a function name.
var toolName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })

// ValidateRequest checks a request the way the real service does: its tools,
// its conversation, and that every tool call in it names a declared tool.
func ValidateRequest(req openai.ChatCompletionRequest) error {
	declared := map[string]bool{}
	for i, t := range req.Tools {
		if t.Type != openai.ToolTypeFunction || t.Function == nil {
			return fmt.Errorf("tools[%d]: only tools of type 'function' with a 'function' object are supported", i)
		}
		name := t.Function.Name
		if !toolName().MatchString(name) {
			return fmt.Errorf("tools[%d].function.name: %q does not match '^[a-zA-Z0-9_-]{1,64}$'", i, name)
		}
		if declared[name] {
			return fmt.Errorf("tools[%d].function.name: duplicate tool name %q", i, name)
		}
		declared[name] = true
	}
	// Tool calls in the history are not checked against the tools: a model
	// may call a tool that does not exist, and the service accepts the
	// conversation that answers it with an error.
	return ValidateMessages(req.Messages)
}

// ValidateMessages checks the shape of a conversation as strictly as the real
// service: known roles, content where it is required, and every tool call
// answered exactly once by tool messages that follow its assistant message.
func ValidateMessages(msgs []openai.ChatCompletionMessage) error {
	if len(msgs) == 0 {
		return errors.New("messages: [] is too short, at least one message is required")
	}
	var (
		pending  map[string]bool // ids of the open tool calls, true once answered
		order    []string        // the same ids in call order, for the error text
		inAnswer bool            // the previous message was an assistant's tool calls or a tool answer
	)
	unanswered := func() []string {
		var ids []string
		for _, id := range order {
			if !pending[id] {
				ids = append(ids, id)
			}
		}
		return ids
	}
	for i, m := range msgs {
		if m.Role == openai.ChatMessageRoleTool {
			if !inAnswer {
				return fmt.Errorf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls'", i)
			}
			answered, ok := pending[m.ToolCallID]
			if !ok {
				return fmt.Errorf("messages[%d]: tool_call_id %q does not answer any tool call of the preceding assistant message", i, m.ToolCallID)
			}
			if answered {
				return fmt.Errorf("messages[%d]: duplicate answer to tool_call_id %q", i, m.ToolCallID)
			}
			if !hasContent(m) {
				return fmt.Errorf("messages[%d]: missing required parameter 'content' of a tool message", i)
			}
			pending[m.ToolCallID] = true
			continue
		}
		if ids := unanswered(); len(ids) > 0 {
			return fmt.Errorf("messages[%d]: an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'; no response for: %s", i, strings.Join(ids, ", "))
		}
		pending, order, inAnswer = nil, nil, false
		switch m.Role {
		case openai.ChatMessageRoleSystem, openai.ChatMessageRoleUser:
			if !hasContent(m) {
				return fmt.Errorf("messages[%d]: missing required parameter 'content' of a %s message", i, m.Role)
			}
		case openai.ChatMessageRoleAssistant:
			if len(m.ToolCalls) == 0 {
				if !hasContent(m) && m.FunctionCall == nil {
					return fmt.Errorf("messages[%d]: an assistant message needs 'content' or 'tool_calls'", i)
				}
				continue
			}
			pending = map[string]bool{}
			for j, tc := range m.ToolCalls {
				if err := checkToolCall(tc); err != nil {
					return fmt.Errorf("messages[%d].tool_calls[%d]: %w", i, j, err)
				}
				if _, dup := pending[tc.ID]; dup {
					return fmt.Errorf("messages[%d].tool_calls[%d]: duplicate tool call id %q", i, j, tc.ID)
				}
				pending[tc.ID] = false
				order = append(order, tc.ID)
			}
			inAnswer = true
		default:
			return fmt.Errorf("messages[%d]: invalid role %q, expected one of system, user, assistant, tool", i, m.Role)
		}
	}
	if ids := unanswered(); len(ids) > 0 {
		return fmt.Errorf("messages: the last assistant message's 'tool_calls' have no tool messages responding to: %s", strings.Join(ids, ", "))
	}
	return nil
}

func checkToolCall(tc openai.ToolCall) error {
	switch {
	case tc.ID == "":
		return errors.New("missing required parameter 'id'")
	case tc.Type != openai.ToolTypeFunction:
		return fmt.Errorf("invalid type %q, expected 'function'", tc.Type)
	case tc.Function.Name == "":
		return errors.New("missing required parameter 'function.name'")
	}
	return nil
}

func hasContent(m openai.ChatCompletionMessage) bool {
	return m.Content != "" || len(m.MultiContent) > 0
}
