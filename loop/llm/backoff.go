package llm

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryPolicy is the shared backoff of the transport and of stream restarts.
type retryPolicy struct {
	maxRetries          int
	baseDelay, maxDelay time.Duration
	onRetry             func(Retry)
	sleep               func(ctx context.Context, d time.Duration) error
}

// backoff is exponential with full jitter: uniform in [0, min(max, base·2^(attempt-1))].
func (p *retryPolicy) backoff(attempt int) time.Duration {
	ceiling := p.baseDelay
	for i := 1; i < attempt && ceiling < p.maxDelay; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, p.maxDelay)
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}

// wait tells OnRetry and sleeps; retryAfter > 0 overrides the jittered delay.
// A refused connection gets refusedRetries short, fixed waits; after them
// wait returns the refusal, in words, instead of sleeping.
func (p *retryPolicy) wait(ctx context.Context, st *callState, retryAfter time.Duration, r Retry) error {
	var ue *unreachableError
	isRefused := errors.As(r.Err, &ue)
	if isRefused && int(st.attempts.Load()) >= refusedRetries {
		return ue
	}
	attempt := st.attempts.Add(1)
	d := p.backoff(int(attempt))
	if retryAfter > 0 {
		d = min(retryAfter, 3*p.maxDelay)
	}
	if isRefused {
		d = refusedWait(int(attempt))
	}
	if p.onRetry != nil {
		r.Agent, r.Attempt, r.Wait = st.agent, int(attempt), d
		p.onRetry(r)
	}
	return p.sleep(ctx, d)
}

// canRetry reports whether the call still has budget left.
func (p *retryPolicy) canRetry(st *callState) bool {
	return int(st.attempts.Load()) < p.maxRetries
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// parseRetryAfter reads delay-seconds or an HTTP date; 0 means absent or unusable.
func parseRetryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(h, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
