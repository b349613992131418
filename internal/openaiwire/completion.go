package openaiwire

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Completion is one assistant answer, before it is put on the wire.
type Completion struct {
	ID        string // "chatcmpl-..." id; a fixed one is used when empty
	Model     string
	Content   string
	ToolCalls []openai.ToolCall // ID, Function.Name and Function.Arguments are used
	Usage     openai.Usage
}

func (c Completion) id() string {
	if c.ID == "" {
		return "chatcmpl-openaiwire"
	}
	return c.ID
}

func (c Completion) finishReason() openai.FinishReason {
	if len(c.ToolCalls) > 0 {
		return openai.FinishReasonToolCalls
	}
	return openai.FinishReasonStop
}

// Response is the non-streaming response body for c.
func (c Completion) Response() openai.ChatCompletionResponse {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: c.Content}
	for _, tc := range c.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{
			ID:       tc.ID,
			Type:     openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments},
		})
	}
	return openai.ChatCompletionResponse{
		ID:      c.id(),
		Object:  "chat.completion",
		Created: time.Now().Unix(),
		Model:   c.Model,
		Choices: []openai.ChatCompletionChoice{{Index: 0, Message: msg, FinishReason: c.finishReason()}},
		Usage:   c.Usage,
	}
}

// WriteJSON answers with c as a plain (non-streaming) JSON response.
func WriteJSON(w http.ResponseWriter, c Completion) error {
	b, err := json.Marshal(c.Response())
	if err != nil {
		return fmt.Errorf("encoding completion: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing completion: %w", err)
	}
	return nil
}
