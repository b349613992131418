// Package exit is how agentteam ends:
//   - an Error carries the exit code main uses and the one sentence the
//     person sees; Code picks the code for any error a command returns;
//   - HardStop and InterruptTwice end the process at a deadline or a
//     second interrupt, whatever is stuck, saying why first.
package exit

import (
	"errors"
	"fmt"
	"strings"
)

// Exit codes.
const (
	Failure = 1
	Usage   = 2
	Timeout = 3
	Budget  = 4 // the run's --max-model-calls, --max-tokens or --max-cost is spent
)

// Error is an error with the exit code main should use. Its message is
// the one sentence the user sees.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usagef is a bad-usage error (exit 2).
func Usagef(format string, a ...any) error {
	return &Error{Code: Usage, Err: fmt.Errorf(format, a...)}
}

// Code picks the exit code for an error returned by a command.
func Code(err error) int {
	if err == nil {
		return 0
	}
	var ee *Error
	if errors.As(err, &ee) {
		return ee.Code
	}
	// cobra's own argument errors are bad usage too.
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "required flag") {
		return Usage
	}
	return Failure
}
