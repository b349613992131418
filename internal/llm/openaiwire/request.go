// Package openaiwire speaks the server side of OpenAI's chat-completions wire
// format: parsing requests, checking conversations as strictly as the real
// service does, and writing answers as JSON or as a server-sent event stream.
// The fake server for tests and the offline demo model share it.
package openaiwire

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// maxRequestBytes bounds a request body; a real conversation stays far below.
const maxRequestBytes = 64 << 20

// ParseRequest decodes a chat-completions request body.
func ParseRequest(r *http.Request) (openai.ChatCompletionRequest, error) {
	req, _, err := ReadRequest(r)
	return req, err
}

// ReadRequest decodes a chat-completions request body and returns the
// body too, for what go-openai's types do not hold (Gemini's extra_content).
func ReadRequest(r *http.Request) (openai.ChatCompletionRequest, []byte, error) {
	var req openai.ChatCompletionRequest
	if r.Method != http.MethodPost {
		return req, nil, fmt.Errorf("method %s not allowed, use POST", r.Method)
	}
	if r.Body == nil {
		return req, nil, fmt.Errorf("empty request body")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		return req, nil, fmt.Errorf("reading request body: %w", err)
	}
	if len(body) > maxRequestBytes {
		return req, nil, fmt.Errorf("request body larger than %d bytes", maxRequestBytes)
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return req, nil, fmt.Errorf("request body is not a chat completion request: %w", err)
	}
	return req, body, nil
}

// ThoughtSignatures returns, per message index, the Gemini thought
// signatures of that message's tool calls ("" where a call has none).
func ThoughtSignatures(body []byte) (map[int][]string, error) {
	var req struct {
		Messages []struct {
			ToolCalls []struct {
				ExtraContent *ExtraContent `json:"extra_content"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, err
	}
	out := map[int][]string{}
	for i, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			sig := ""
			if tc.ExtraContent != nil {
				sig = tc.ExtraContent.Google.ThoughtSignature
			}
			out[i] = append(out[i], sig)
		}
	}
	return out, nil
}
