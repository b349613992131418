package llm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// RetryCause is why a model call is retried, as a class a program can act on.
type RetryCause string

// Causes of a retry; a 504 counts as a server error, like any other 5xx.
const (
	RetryRateLimit   RetryCause = "rate_limit"   // HTTP 429
	RetryServerError RetryCause = "server_error" // HTTP 500, 502, 503, 504
	RetryTimeout     RetryCause = "timeout"      // the network timed out
	RetryConnection  RetryCause = "connection"   // refused, reset, or a stream that broke off
)

// Retry is one retry of a model call, told to OnRetry before its wait.
type Retry struct {
	Agent   string
	Attempt int           // 1 for the first retry of a call
	Wait    time.Duration // the delay before the next attempt
	Cause   RetryCause
	Status  int   // the HTTP status that caused it; 0 for a network failure
	Err     error // what failed, in words
}

// statusRetry is the retry of an HTTP answer with a retryable status.
func statusRetry(code int, err error) Retry {
	cause := RetryServerError
	if code == http.StatusTooManyRequests {
		cause = RetryRateLimit
	}
	return Retry{Cause: cause, Status: code, Err: err}
}

// netRetry is the retry of a request or stream that failed on the network.
func netRetry(err error) Retry {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return Retry{Cause: RetryTimeout, Err: err}
	}
	if refused(err) {
		return Retry{Cause: RetryConnection, Err: unreachable(err)}
	}
	return Retry{Cause: RetryConnection, Err: err}
}

// A refused connection means nothing listens at the address: a server that
// is starting gets refusedRetries short waits, not the whole backoff.
const refusedRetries = 2

// refusedWait is the wait before the n-th retry (from 1) of a refused connection.
func refusedWait(n int) time.Duration { return time.Duration(n) * 500 * time.Millisecond }

// refused reports whether the server's address refused the connection.
func refused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// unreachableError is a refused connection in words, naming the base URL
// rather than Go's dial text.
type unreachableError struct {
	base string
	err  error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach the model server at %s: connection refused (is it running? check --base-url)", e.base)
}
func (e *unreachableError) Unwrap() error { return e.err }

// unreachable wraps a refused request's error with the base URL it was for.
func unreachable(err error) error {
	base := "the configured address"
	var uerr *url.Error
	var ue *unreachableError
	switch {
	case errors.As(err, &uerr):
		base = strings.TrimSuffix(uerr.URL, "/chat/completions")
	case errors.As(err, &ue):
		return ue
	}
	return &unreachableError{base: base, err: err}
}
