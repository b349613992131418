package loop

import (
	"context"
	"errors"
	"net"
	"net/http"
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
	return Retry{Cause: RetryConnection, Err: err}
}
