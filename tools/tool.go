// Package tools holds the function tools agents call. Each tool is a typed
// argument struct plus a description; the JSON schema comes from the struct.
// A refusal the model should read is a Result with IsError; a Go error is
// reserved for a broken program.
package tools

import (
	"context"
	"encoding/json"
	"strings"
)

// Result is what a tool call returns to the model.
type Result struct {
	Content string
	IsError bool
	// AfterRecord, if set, runs once the result is safely recorded in the
	// caller's conversation (read_inbox marks messages read there).
	AfterRecord func() error
}

// errorMark starts the content of every error result: a conversation keeps
// only the text, and this is how a reader of it tells a failed call.
const errorMark = "error: "

// Errorf is a tool result that tells the model what went wrong.
func Errorf(format string, a ...any) Result {
	return Result{Content: errorMark + sprintf(format, a...), IsError: true}
}

// IsErrorText reports whether a tool result's content, as a conversation
// records it, is an error result (one made by Errorf).
func IsErrorText(content string) bool { return strings.HasPrefix(content, errorMark) }

// ErrorText is an error result's message without its mark; any other content unchanged.
func ErrorText(content string) string { return strings.TrimPrefix(content, errorMark) }

// Text is a successful tool result.
func Text(s string) Result { return Result{Content: s} }

// Tool is one callable function.
type Tool interface {
	Name() string
	Description() string
	// Params returns a zero value of the argument struct; its schema is generated.
	Params() any
	// Run executes the call with raw JSON arguments.
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}
