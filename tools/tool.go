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
	// Diff is the unified diff a write made (write_file, edit_file), for
	// the event log and the TUI; the model is not sent it.
	Diff string
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

// textOrRefusal turns an answer from the rest of the program into a tool
// result: its text, or its error (a refusal) for the model to read.
func textOrRefusal(text string, err error) (Result, error) {
	if err != nil {
		return Errorf("%v", err), nil
	}
	return Text(text), nil
}

// Tool is one callable function.
type Tool interface {
	Name() string
	Description() string
	// Params returns a zero value of the argument struct; its schema is generated.
	Params() any
	// Run executes the call with raw JSON arguments.
	Run(ctx context.Context, args json.RawMessage) (Result, error)
}

// newTool makes a Tool from a function of typed arguments. A's fields, with
// their json and description tags, are the schema; a call's JSON arguments
// are decoded into an A, and a call that does not fit is an error Result
// for the model without run being called.
func newTool[A any](name, description string, run func(ctx context.Context, a A) (Result, error), opts ...toolOption) Tool {
	t := &typedTool[A]{name: name, description: description, run: run}
	for _, o := range opts {
		o(&t.toolOptions)
	}
	return t
}

// toolOption changes how a Set treats a tool made by newTool.
type toolOption func(*toolOptions)

type toolOptions struct{ parallel bool }

// parallel lets a tool's calls run alongside the other parallel calls of
// one model turn: give it to tools that change nothing another call reads.
func parallel(o *toolOptions) { o.parallel = true }

type typedTool[A any] struct {
	name, description string
	run               func(ctx context.Context, a A) (Result, error)
	toolOptions
}

func (t *typedTool[A]) Name() string        { return t.name }
func (t *typedTool[A]) Description() string { return t.description }
func (t *typedTool[A]) Parallel() bool      { return t.parallel }

func (t *typedTool[A]) Params() any {
	var zero A
	return zero
}

func (t *typedTool[A]) Run(ctx context.Context, args json.RawMessage) (Result, error) {
	var a A
	if err := decode(args, &a); err != nil {
		return Errorf("%v", err), nil
	}
	return t.run(ctx, a)
}
