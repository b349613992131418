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
	// Reasoning is the model's thinking, sent before the content.
	Reasoning string
	// Signatures are Gemini thought signatures, one per tool call ("" none).
	Signatures []string
}

func (c Completion) id() string {
	if c.ID == "" {
		return "chatcmpl-openaiwire"
	}
	return c.ID
}

func (c Completion) finishReason(q Quirks) string {
	switch {
	case q.ContentFilter:
		return string(openai.FinishReasonContentFilter)
	case q.FinishLength:
		return string(openai.FinishReasonLength)
	case len(c.ToolCalls) > 0:
		return string(openai.FinishReasonToolCalls)
	}
	return string(openai.FinishReasonStop)
}

// calls are the tool calls as the quirks put them: arguments cut at the
// output limit, ids dropped.
func (c Completion) calls(q Quirks) []openai.ToolCall {
	calls := append([]openai.ToolCall(nil), c.ToolCalls...)
	for i := range calls {
		if q.NoIDs {
			calls[i].ID = ""
		}
	}
	if q.FinishLength && len(calls) > 0 {
		last := &calls[len(calls)-1]
		last.Function.Arguments = last.Function.Arguments[:len(last.Function.Arguments)/2]
	}
	return calls
}

func (c Completion) signature(i int) *ExtraContent {
	if i >= len(c.Signatures) || c.Signatures[i] == "" {
		return nil
	}
	var e ExtraContent
	e.Google.ThoughtSignature = c.Signatures[i]
	return &e
}

// Wire shapes, spelled out so that the quirks can bend them.
type wireResponse struct {
	ID                  string          `json:"id"`
	Object              string          `json:"object"`
	Created             int64           `json:"created"`
	Model               string          `json:"model"`
	PromptFilterResults json.RawMessage `json:"prompt_filter_results,omitempty"`
	Choices             []wireChoice    `json:"choices"`
	Usage               *openai.Usage   `json:"usage,omitempty"`
	XGroq               *xGroq          `json:"x_groq,omitempty"`
}

type xGroq struct {
	ID    string        `json:"id,omitempty"`
	Usage *openai.Usage `json:"usage,omitempty"`
}

type wireChoice struct {
	Index                int             `json:"index"`
	Message              wireMessage     `json:"message"`
	FinishReason         string          `json:"finish_reason"`
	ContentFilterResults json.RawMessage `json:"content_filter_results,omitempty"`
}

type wireMessage struct {
	Role             string         `json:"role"`
	Content          string         `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	Reasoning        string         `json:"reasoning,omitempty"`
	ToolCalls        []wireToolCall `json:"tool_calls,omitempty"`
}

type wireToolCall struct {
	Index        *int          `json:"index,omitempty"`
	ID           string        `json:"id,omitempty"`
	Type         string        `json:"type,omitempty"`
	Function     wireFunction  `json:"function"`
	ExtraContent *ExtraContent `json:"extra_content,omitempty"`
}

type wireFunction struct {
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments"`
}

// arguments encodes a call's arguments: a JSON string, or with ArgsAsObject
// the object itself when it is one.
func arguments(args string, q Quirks) json.RawMessage {
	if q.ArgsAsObject && json.Valid([]byte(args)) && len(args) > 0 && args[0] == '{' {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args) // a string always marshals
	return b
}

// setReasoning puts reasoning in the field the quirks name.
func setReasoning(m *wireMessage, reasoning string, q Quirks) {
	if q.reasoningField() == "reasoning" {
		m.Reasoning = reasoning
	} else {
		m.ReasoningContent = reasoning
	}
}

// content is the content as the quirks leave it: cut in half by a content filter.
func (c Completion) content(q Quirks) string {
	if q.ContentFilter {
		return c.Content[:len(c.Content)/2]
	}
	return c.Content
}

func (c Completion) wire(q Quirks) wireResponse {
	msg := wireMessage{Role: openai.ChatMessageRoleAssistant, Content: c.content(q)}
	setReasoning(&msg, c.Reasoning, q)
	for i, tc := range c.calls(q) {
		msg.ToolCalls = append(msg.ToolCalls, wireToolCall{ID: tc.ID, Type: string(openai.ToolTypeFunction),
			Function:     wireFunction{Name: tc.Function.Name, Arguments: arguments(tc.Function.Arguments, q)},
			ExtraContent: c.signature(i)})
	}
	r := wireResponse{ID: c.id(), Object: "chat.completion", Created: time.Now().Unix(), Model: c.Model,
		PromptFilterResults: q.promptFilterResults(),
		Choices:             []wireChoice{{Index: 0, Message: msg, FinishReason: c.finishReason(q), ContentFilterResults: q.filterResults(true)}}}
	u := c.Usage
	if q.UsageInXGroq {
		r.XGroq = &xGroq{ID: "req_" + c.id(), Usage: &u}
	} else {
		r.Usage = &u
	}
	return r
}

// WriteJSON answers with c as a plain (non-streaming) JSON response.
func WriteJSON(w http.ResponseWriter, c Completion) error {
	return WriteJSONQuirks(w, c, Quirks{})
}

// WriteJSONQuirks answers with c as a plain JSON response bent by q.
func WriteJSONQuirks(w http.ResponseWriter, c Completion, q Quirks) error {
	b, err := json.Marshal(c.wire(q))
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
