package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// ErrAuth means the model server refused the API key (HTTP 401 or 403).
var ErrAuth = errors.New("the model server refused the API key")

// ErrContextLength means the request no longer fits the model's context window.
var ErrContextLength = errors.New("the conversation is longer than the model's context window")

// authError is a refused key; its sentence names the variable that held it.
type authError struct {
	status int
	keyEnv string
}

func (e *authError) Error() string {
	return fmt.Sprintf("%v (HTTP %d): check %s", ErrAuth, e.status, e.keyEnv)
}
func (e *authError) Is(target error) bool { return target == ErrAuth }

// badBodyError is a response that is not an API answer at all (an HTML page
// from a proxy, a login portal, a wrong base URL).
type badBodyError struct {
	Status      int
	ContentType string
}

func (e *badBodyError) Error() string {
	ct := e.ContentType
	if ct == "" {
		ct = "no content type"
	}
	return fmt.Sprintf("the model server answered HTTP %d with %s, not a JSON API response: check --base-url (OPENAI_BASE_URL)", e.Status, ct)
}

// streamDropError is a stream that broke off after it started; Complete retries it.
type streamDropError struct{ err error }

func (e *streamDropError) Error() string {
	return "the model's reply stream broke off: " + e.err.Error()
}
func (e *streamDropError) Unwrap() error { return e.err }

// apiError is an error the server put in words: in an HTTP error answer,
// in a 200 answer, or in a stream chunk.
type apiError struct {
	Status  int    // the HTTP status; 200 for an error inside an answer
	Code    string // the body's code ("context_length_exceeded", "502"…)
	Type    string // the body's type ("exceed_context_size_error"…)
	Message string
	// Window and Prompt are the context window and the request's tokens,
	// where the server says them (llama.cpp's n_ctx and n_prompt_tokens).
	Window, Prompt int
}

func (e *apiError) Error() string { return e.Message }

// codeStatus is the body's code when it is an HTTP status (OpenRouter,
// vLLM and Gemini put one there); 0 otherwise.
func (e *apiError) codeStatus() int {
	n, err := strconv.Atoi(e.Code)
	if err != nil || n < 400 || n > 599 {
		return 0
	}
	return n
}

// parseErrorBody reads an error body in any of the shapes servers use:
// OpenAI's {"error":{…}}, a plain {"error":"…"} (TGI, Ollama), vLLM's and
// Mistral's {"object":"error",…}, FastAPI's {"detail":…}, and Gemini's
// array of those. ok is false when the body is none of them.
func parseErrorBody(status int, body []byte) (e *apiError, ok bool) {
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var list []json.RawMessage
		if json.Unmarshal(body, &list) != nil || len(list) == 0 {
			return nil, false
		}
		body = list[0]
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return nil, false
	}
	e = &apiError{Status: status}
	fields := top
	if raw, has := top["error"]; has && !isNull(raw) {
		if s, isStr := jsonString(raw); isStr {
			e.Message = s
			e.Type, _ = jsonString(top["error_type"])
			return e, true
		}
		var inner map[string]json.RawMessage
		if json.Unmarshal(raw, &inner) == nil {
			fields = inner
		}
	} else if _, has := top["detail"]; has {
		e.Message = messageText(top["detail"])
		return e, e.Message != ""
	} else if obj, _ := jsonString(top["object"]); obj != "error" {
		return nil, false
	}
	e.Message = messageText(fields["message"])
	e.Type, _ = jsonString(fields["type"])
	if e.Type == "" {
		e.Type, _ = jsonString(fields["status"]) // Gemini's
	}
	e.Code = codeText(fields["code"])
	e.Window, e.Prompt = jsonInt(fields["n_ctx"]), jsonInt(fields["n_prompt_tokens"])
	if e.Message == "" {
		e.Message = snippet(string(body))
	}
	return e, true
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func codeText(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	if isNull(raw) {
		return ""
	}
	return string(raw)
}

// messageText makes one line of a message that may be a string, or
// pydantic's details (Mistral: {"detail":[{"loc":[…],"msg":…}]}).
func messageText(raw json.RawMessage) string {
	if s, ok := jsonString(raw); ok {
		return s
	}
	if isNull(raw) {
		return ""
	}
	var obj struct {
		Detail  json.RawMessage `json:"detail"`
		Message json.RawMessage `json:"message"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &obj) == nil {
		if !isNull(obj.Detail) {
			return messageText(obj.Detail)
		}
		return messageText(obj.Message)
	}
	var details []struct {
		Loc  []any  `json:"loc"`
		Msg  string `json:"msg"`
		Type string `json:"type"`
	}
	if raw[0] == '[' && json.Unmarshal(raw, &details) == nil && len(details) > 0 {
		var parts []string
		for _, d := range details {
			var loc []string
			for _, l := range d.Loc {
				if l != "body" {
					loc = append(loc, fmt.Sprint(l))
				}
			}
			p := d.Msg
			if len(loc) > 0 {
				p = strings.Join(loc, ".") + ": " + p
			}
			if d.Type != "" {
				p += " (" + d.Type + ")"
			}
			parts = append(parts, p)
		}
		return strings.Join(parts, "; ")
	}
	return snippet(string(raw))
}

// classify turns what the request returned into one clear sentence,
// keeping the sentinels reachable with errors.Is.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var bad *badBodyError
	if errors.As(err, &bad) {
		return bad
	}
	var dec *decodeError
	if errors.As(err, &dec) {
		return dec
	}
	var apiErr *apiError
	if errors.As(err, &apiErr) {
		return classifyAPI(apiErr)
	}
	if refused(err) {
		return unreachable(err)
	}
	return fmt.Errorf("the model request failed: %w", err)
}

func classifyAPI(e *apiError) error {
	status := e.Status
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return &authError{status: status, keyEnv: "OPENAI_API_KEY"}
	case isContextLength(e):
		return contextError(e)
	case status < 300:
		return &quietError{msg: "the model server reported an error: " + e.Message, err: e}
	default:
		return &quietError{msg: fmt.Sprintf("the model server answered HTTP %d: %s", status, e.Message), err: e}
	}
}

// quietError keeps the cause reachable without repeating its text.
type quietError struct {
	msg string
	err error
}

func (e *quietError) Error() string { return e.msg }
func (e *quietError) Unwrap() error { return e.err }

func isContextLength(e *apiError) bool {
	if e.Code == "context_length_exceeded" || e.Type == "exceed_context_size_error" {
		return true
	}
	switch e.Status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusOK:
	default:
		return false
	}
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "maximum context length") || strings.Contains(m, "context_length_exceeded") ||
		strings.Contains(m, "context window") || strings.Contains(m, "exceeds the available context size") ||
		// LM Studio: "Trying to keep the first N tokens when context the overflows…"
		strings.Contains(m, "context the overflows") || strings.Contains(m, "greater than the context length")
}

// snippet keeps error bodies short enough for one line: s on one line,
// cut to 200 bytes.
func snippet(s string) string {
	const n = 200
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// ContextError is a request longer than the model's context window; it is
// ErrContextLength. Window and Prompt are 0 where the server did not say.
type ContextError struct {
	Window, Prompt int
	msg            string
}

func (e *ContextError) Error() string { return ErrContextLength.Error() + ": " + e.msg }
func (e *ContextError) Unwrap() error { return ErrContextLength }

// openAIWindow reads "maximum context length is 8192 tokens. However, your
// messages resulted in 9000 tokens" (OpenAI, vLLM, LiteLLM, Groq…).
var openAIWindow = regexp.MustCompile(`(?i)maximum context length is (\d+) tokens.*?(?:resulted in|requested) (\d+) tokens`)

func contextError(e *apiError) error {
	c := &ContextError{Window: e.Window, Prompt: e.Prompt, msg: e.Message}
	if m := openAIWindow.FindStringSubmatch(e.Message); m != nil && c.Window == 0 {
		c.Window, _ = strconv.Atoi(m[1])
		c.Prompt, _ = strconv.Atoi(m[2])
	}
	return c
}

// jsonInt is a JSON number's value, or 0.
func jsonInt(raw json.RawMessage) int {
	var n float64
	if json.Unmarshal(raw, &n) != nil || n < 0 || n > 1<<31 {
		return 0
	}
	return int(n)
}
