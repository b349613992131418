// Package demo is the built-in offline model of `agentteam --demo`: a tiny
// deterministic OpenAI-compatible chat-completions server that runs
// in-process, understands a few team commands, and is as strict about
// conversations as the real service.
package demo

import (
	"encoding/json"
	"fmt"
	"net/http"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/openaiwire"
)

// BaseURL is the base URL to configure with NewHTTPClient; it is never dialled.
const BaseURL = "http://demo.agentteam.invalid/v1"

// Model is the model name the demo reports when the request names none.
const Model = "agentteam-demo"

// agentHeader names the agent making a request.
const agentHeader = "X-Agentteam-Agent"

// answer is one model turn: text, or tool calls.
type answer struct {
	content string
	calls   []openai.ToolCall
}

// Handler serves the demo model at /v1/chat/completions.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", serve)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		openaiwire.WriteError(w, http.StatusNotFound, openaiwire.TypeInvalidRequest, "unknown_url",
			fmt.Sprintf("Unknown request URL: %s %s", r.Method, r.URL.Path))
	})
	return mux
}

func serve(w http.ResponseWriter, r *http.Request) {
	req, err := openaiwire.ParseRequest(r)
	if err == nil {
		err = openaiwire.ValidateRequest(req)
	}
	if err != nil {
		openaiwire.WriteError(w, http.StatusBadRequest, openaiwire.TypeInvalidRequest, "", err.Error())
		return
	}
	a := decide(req, r.Header.Get(agentHeader))
	model := req.Model
	if model == "" {
		model = Model
	}
	c := openaiwire.Completion{
		ID:        fmt.Sprintf("chatcmpl-demo-%d", len(req.Messages)),
		Model:     model,
		Content:   a.content,
		ToolCalls: a.calls,
		Usage:     openaiwire.EstimateUsage(req, a.content, a.calls),
	}
	if !req.Stream {
		_ = openaiwire.WriteJSON(w, c)
		return
	}
	_ = openaiwire.WriteStream(r.Context(), w, c, openaiwire.StreamOptions{
		IncludeUsage: req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		PieceSize:    12,
	})
}

// decide picks lead or teammate behaviour: a teammate's system prompt names it.
func decide(req openai.ChatCompletionRequest, agent string) answer {
	name, role := identity(req.Messages)
	if name == "" {
		name = agent
	}
	if name == "" || name == "lead" || agent == "lead" {
		return leadTurn(req)
	}
	if role == "" {
		role = "teammate"
	}
	return teammateTurn(req, name, role)
}

// toolCall builds a call whose id is unique within the conversation.
func toolCall(msgs []openai.ChatCompletionMessage, name string, args map[string]any) openai.ToolCall {
	b, err := json.Marshal(args)
	if err != nil { // a map of strings and booleans always marshals
		b = []byte("{}")
	}
	return openai.ToolCall{
		ID:       fmt.Sprintf("call_demo_%d", len(msgs)),
		Type:     openai.ToolTypeFunction,
		Function: openai.FunctionCall{Name: name, Arguments: string(b)},
	}
}
