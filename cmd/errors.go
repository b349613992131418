package cmd

import (
	"errors"
	"fmt"
	"strings"
)

// Exit codes.
const (
	ExitFailure = 1
	ExitUsage   = 2
	ExitTimeout = 3
	ExitBudget  = 4 // the run's --max-model-calls, --max-tokens or --max-cost is spent
)

// ExitError is an error with the exit code main should use. Its message is
// the one sentence the user sees.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// usageErrorf is a bad-usage error (exit 2).
func usageErrorf(format string, a ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, a...)}
}

// ExitCode picks the exit code for an error returned by a command.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	// cobra's own argument errors are bad usage too.
	msg := err.Error()
	if strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "unknown flag") ||
		strings.HasPrefix(msg, "required flag") {
		return ExitUsage
	}
	return ExitFailure
}
