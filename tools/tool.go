// Package tools holds the function tools agents call. Each tool is a typed
// argument struct plus a description; the JSON schema comes from the struct.
// A refusal the model should read is a Result with IsError; a Go error is
// reserved for a broken program.
package tools

import (
	"context"
	"encoding/json"
)

// Result is what a tool call returns to the model.
type Result struct {
	Content string
	IsError bool
	// AfterRecord, if set, runs once the result is safely recorded in the
	// caller's conversation (read_inbox marks messages read there).
	AfterRecord func() error
}

// Errorf is a tool result that tells the model what went wrong.
func Errorf(format string, a ...any) Result {
	return Result{Content: "error: " + sprintf(format, a...), IsError: true}
}

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
