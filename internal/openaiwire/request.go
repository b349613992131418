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
	var req openai.ChatCompletionRequest
	if r.Method != http.MethodPost {
		return req, fmt.Errorf("method %s not allowed, use POST", r.Method)
	}
	if r.Body == nil {
		return req, fmt.Errorf("empty request body")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxRequestBytes+1))
	if err != nil {
		return req, fmt.Errorf("reading request body: %w", err)
	}
	if len(body) > maxRequestBytes {
		return req, fmt.Errorf("request body larger than %d bytes", maxRequestBytes)
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return req, fmt.Errorf("request body is not a chat completion request: %w", err)
	}
	return req, nil
}
