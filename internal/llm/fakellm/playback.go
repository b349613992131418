package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/openaiwire"
)

// Playbacks of what real OpenAI-compatible servers send. A
// server-wide rule is an Option; a reply's shape is a Reply field; a
// server's error answer is a Reply built here, with its bytes.

// StreamOptionsStyle is how a server refuses the stream_options field.
type StreamOptionsStyle int

// The servers known to refuse stream_options.
const (
	// Groq answers 400 "property 'stream_options' is unsupported".
	Groq StreamOptionsStyle = iota + 1
	// Mistral answers 422 with pydantic's extra_forbidden detail.
	Mistral
)

// RefuseStreamOptions makes the server refuse every request that carries
// stream_options, the way style's server does.
func RefuseStreamOptions(style StreamOptionsStyle) Option {
	return func(s *Server) { s.refuseStreamOptions = style }
}

// RequireNineCharCallIDs makes the server refuse tool call ids that are not
// 9 letters and digits (Mistral models served by vLLM or mlx).
func RequireNineCharCallIDs() Option {
	return func(s *Server) { s.nineCharIDs = true }
}

// RequireReasoningContent makes the server refuse an assistant message with
// tool calls that comes back without its reasoning_content (DeepSeek's
// thinking mode with tools).
func RequireReasoningContent() Option {
	return func(s *Server) { s.reasoningBack = true }
}

// RequireThoughtSignatures makes the server refuse an assistant message
// whose first tool call lacks the thought signature it was given (Gemini
// 3's OpenAI endpoint), or Gemini's documented sentinel for histories
// that have none.
func RequireThoughtSignatures() Option {
	return func(s *Server) { s.signatures = true }
}

// SkipThoughtSignature is Gemini's sentinel for a tool call whose signature was lost.
const SkipThoughtSignature = "skip_thought_signature_validator"

func thoughtSignature(c Call) string {
	return fmt.Sprintf("sig-%s-%d", c.Agent, c.N)
}

// toolCallsText writes calls the way Qwen and Hermes models do when no
// tool parser turns them into tool_calls.
func toolCallsText(calls []ToolCall) string {
	var b strings.Builder
	for _, tc := range calls {
		args := json.RawMessage(tc.Args)
		if !json.Valid(args) {
			args, _ = json.Marshal(tc.Args)
		}
		line, _ := json.Marshal(struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}{tc.Name, args})
		fmt.Fprintf(&b, "\n<tool_call>\n%s\n</tool_call>", line)
	}
	return b.String()
}

var nineChars = regexp.MustCompile(`^[a-zA-Z0-9]{9}$`)

// refusal is the answer of a server-wide rule to a request, if any.
func (s *Server) refusal(req openai.ChatCompletionRequest, body []byte) *Reply {
	if req.StreamOptions != nil {
		switch s.refuseStreamOptions {
		case Groq:
			return &Reply{Status: http.StatusBadRequest, ContentType: "application/json",
				Body: `{"error":{"message":"property 'stream_options' is unsupported","type":"invalid_request_error"}}` + "\n"}
		case Mistral:
			return &Reply{Status: http.StatusUnprocessableEntity, ContentType: "application/json",
				Body: `{"object":"error","message":{"detail":[{"type":"extra_forbidden","loc":["body","stream_options"],"msg":"Extra inputs are not permitted","input":{"include_usage":true}}]},"type":"invalid_request_error","param":null,"code":null}`}
		}
	}
	for i, m := range req.Messages {
		for _, tc := range m.ToolCalls {
			if s.nineCharIDs && !nineChars.MatchString(tc.ID) {
				return vllmError(http.StatusBadRequest, fmt.Sprintf("Tool call id was %s but must be a-z, A-Z, 0-9, with a length of 9.", tc.ID))
			}
		}
		if s.nineCharIDs && m.Role == openai.ChatMessageRoleTool && !nineChars.MatchString(m.ToolCallID) {
			return vllmError(http.StatusBadRequest, fmt.Sprintf("Tool call id was %s but must be a-z, A-Z, 0-9, with a length of 9.", m.ToolCallID))
		}
		if s.reasoningBack && m.Role == openai.ChatMessageRoleAssistant && len(m.ToolCalls) > 0 && m.ReasoningContent == "" {
			return &Reply{Status: http.StatusBadRequest, ContentType: "application/json", Body: fmt.Sprintf(
				`{"error":{"message":"Missing `+"`reasoning_content`"+` field in the assistant message at message index %d. For more information, please refer to https://api-docs.deepseek.com/guides/thinking_mode#tool-calls","type":"invalid_request_error","param":null,"code":"invalid_request_error"}}`, i)}
		}
	}
	if s.signatures {
		return s.signatureRefusal(req, body)
	}
	return nil
}

// signatureRefusal checks that every assistant turn's first tool call
// carries a signature this server gave, or the sentinel.
func (s *Server) signatureRefusal(req openai.ChatCompletionRequest, body []byte) *Reply {
	sigs, err := openaiwire.ThoughtSignatures(body)
	if err != nil {
		return nil
	}
	s.mu.Lock()
	issued := map[string]bool{}
	for _, c := range s.calls {
		issued[thoughtSignature(c)] = true
	}
	s.mu.Unlock()
	for i, m := range req.Messages {
		if m.Role != openai.ChatMessageRoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		if sig := sigs[i][0]; sig != SkipThoughtSignature && !issued[sig] {
			r := GeminiErrorArray(http.StatusBadRequest, fmt.Sprintf("Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call `default_api:%s` , position %d. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.", m.ToolCalls[0].Function.Name, i+1))
			return &r
		}
	}
	return nil
}

func vllmError(status int, msg string) *Reply {
	b, _ := json.Marshal(map[string]any{"object": "error", "message": msg, "type": "BadRequestError", "param": nil, "code": status})
	return &Reply{Status: status, ContentType: "application/json", Body: string(b)}
}

// OpenAIError200 is HTTP 200 carrying OpenAI's error shape, with no
// trailing newline (proxies that turn an upstream error into a 200).
func OpenAIError200(msg string) Reply {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": nil}})
	return Reply{ContentType: "application/json", Body: string(b)}
}

// VLLMError200 is HTTP 200 carrying vLLM's error object.
func VLLMError200(msg string) Reply {
	r := vllmError(http.StatusBadRequest, msg)
	r.Status = http.StatusOK
	return *r
}

// TGIError200 is HTTP 200 carrying text-generation-inference's error object.
func TGIError200(msg string) Reply {
	b, _ := json.Marshal(map[string]any{"error": msg, "error_type": "validation"})
	return Reply{ContentType: "application/json", Body: string(b) + "\n"}
}

// LlamaCppContextError is llama.cpp's answer to a prompt longer than its context.
func LlamaCppContextError() Reply {
	return Reply{Status: http.StatusBadRequest, ContentType: "application/json; charset=utf-8",
		Body: `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":14429,"n_ctx":8192}}`}
}

// GeminiErrorArray is an error of Gemini's OpenAI endpoint: a JSON array.
func GeminiErrorArray(status int, msg string) Reply {
	b, _ := json.Marshal([]any{map[string]any{"error": map[string]any{"code": status, "message": msg, "status": "INVALID_ARGUMENT"}}})
	return Reply{Status: status, ContentType: "application/json", Body: string(b)}
}

// quirks are the reply's playback fields as openaiwire's quirks.
func (r Reply) quirks() openaiwire.Quirks {
	q := openaiwire.Quirks{
		NoIDs: r.NoIDs, WholeCalls: r.WholeCalls, NoIndex: r.NoIndex, ArgsAsObject: r.ArgsAsObject,
		ReasoningField: r.ReasoningField, UsageInXGroq: r.UsageInXGroq, FinishLength: r.FinishLength,
		KeepAlives: r.KeepAlives, KeepAlive: r.KeepAlive, NoDone: r.NoDone, NoFinish: r.NoFinish,
		StallAfter: r.StallAfter, AzureFilters: r.AzureFilters, ContentFilter: r.ContentFiltered, MultiLineData: r.MultiLineData,
	}
	if r.InBandError != "" {
		q.InBandError = &openaiwire.InBandError{Code: orDefault(r.InBandCode, http.StatusBadGateway), Message: r.InBandError}
	}
	return q
}

// holdsOpen: the reply keeps the connection open after its last byte, so
// nothing may be held back.
func (r Reply) holdsOpen() bool { return r.NoDone || r.StallAfter > 0 }
