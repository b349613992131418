package llm

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// Gemini's OpenAI endpoint signs a turn's first tool call with a thought
// signature (extra_content.google.thought_signature) and refuses the next
// request if it does not come back. go-openai's ToolCall has no room for
// it, so the client keeps the signatures it was given, by call id, and puts
// them back on the wire.

// skipSignature is Gemini's documented sentinel for a call whose signature
// is lost (a conversation resumed by another process).
const skipSignature = "skip_thought_signature_validator"

type extraContent struct {
	Google struct {
		ThoughtSignature string `json:"thought_signature,omitempty"`
	} `json:"google"`
}

func (e *extraContent) signature() string {
	if e == nil {
		return ""
	}
	return e.Google.ThoughtSignature
}

// keepSignatures remembers the signatures of a reply whose calls have their ids.
func (c *Client) keepSignatures(resp Response) {
	for i, sig := range resp.signatures {
		if sig != "" && i < len(resp.Message.ToolCalls) {
			c.sigs.Store(resp.Message.ToolCalls[i].ID, sig)
			c.signing.Store(true)
		}
	}
}

// refusesMissingSignature: Gemini's 400 for a call sent back unsigned.
func refusesMissingSignature(err error) bool {
	var e *apiError
	return errors.As(err, &e) && e.Status == http.StatusBadRequest && strings.Contains(e.Message, "thought_signature")
}

type signedRequest struct {
	openai.ChatCompletionRequest
	Messages []json.RawMessage `json:"messages"`
}

type signedCall struct {
	openai.ToolCall
	ExtraContent *extraContent `json:"extra_content,omitempty"`
}

// signedBody is creq's body with every assistant turn's calls signed: the
// signature each was given, or the sentinel on a turn's first call.
func (c *Client) signedBody(creq openai.ChatCompletionRequest) ([]byte, error) {
	out := signedRequest{ChatCompletionRequest: creq, Messages: make([]json.RawMessage, len(creq.Messages))}
	for i, m := range creq.Messages {
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		if m.Role == openai.ChatMessageRoleAssistant && len(m.ToolCalls) > 0 {
			if b, err = c.sign(b, m.ToolCalls); err != nil {
				return nil, err
			}
		}
		out.Messages[i] = b
	}
	return json.Marshal(out)
}

func (c *Client) sign(msg []byte, calls []openai.ToolCall) ([]byte, error) {
	signed := make([]signedCall, len(calls))
	for j, tc := range calls {
		signed[j].ToolCall = tc
		sig, _ := c.sigs.Load(tc.ID)
		s, _ := sig.(string)
		if s == "" && j == 0 {
			s = skipSignature
		}
		if s != "" {
			signed[j].ExtraContent = &extraContent{}
			signed[j].ExtraContent.Google.ThoughtSignature = s
		}
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(msg, &fields); err != nil {
		return nil, err
	}
	b, err := json.Marshal(signed)
	if err != nil {
		return nil, err
	}
	fields["tool_calls"] = b
	return json.Marshal(fields)
}
