package loop

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// ErrAuth means the model server refused the API key (HTTP 401 or 403).
var ErrAuth = errors.New("the model server refused the API key")

// ErrContextLength means the request no longer fits the model's context window.
var ErrContextLength = errors.New("the conversation is longer than the model's context window")

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

// classify turns what go-openai returns into one clear sentence, keeping the
// sentinels reachable with errors.Is.
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
	var apiErr *openai.APIError
	if errors.As(err, &apiErr) {
		return classifyStatus(apiErr.HTTPStatusCode, fmt.Sprint(apiErr.Code), apiErr.Message, err)
	}
	var reqErr *openai.RequestError
	if errors.As(err, &reqErr) {
		return classifyStatus(reqErr.HTTPStatusCode, "", snippet(string(reqErr.Body)), err)
	}
	return fmt.Errorf("the model request failed: %w", err)
}

func classifyStatus(status int, code, message string, err error) error {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%w (HTTP %d): check OPENAI_API_KEY", ErrAuth, status)
	case isContextLength(status, code, message):
		return fmt.Errorf("%w: %s", ErrContextLength, message)
	case status == 0:
		return &quietError{msg: "the model server reported an error: " + message, err: err}
	default:
		return &quietError{msg: fmt.Sprintf("the model server answered HTTP %d: %s", status, message), err: err}
	}
}

// quietError keeps go-openai's error reachable without repeating its wordy text.
type quietError struct {
	msg string
	err error
}

func (e *quietError) Error() string { return e.msg }
func (e *quietError) Unwrap() error { return e.err }

func isContextLength(status int, code, message string) bool {
	if code == "context_length_exceeded" {
		return true
	}
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge && status != 0 {
		return false
	}
	m := strings.ToLower(message)
	return strings.Contains(m, "maximum context length") || strings.Contains(m, "context_length_exceeded") ||
		strings.Contains(m, "context window")
}

// snippet keeps error bodies short enough for one line.
func snippet(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
