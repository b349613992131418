package natsconn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"
)

// A publish the server refuses for lack of permission gets no answer: the
// server tells the connection apart (an asynchronous error naming the
// subject), and the publish would only time out. Connect's connections
// hand those errors to refusals, and a publish that watches its subject
// ends at once with the server's refusal.

// refusals are the watchers of refused subjects, per connection.
var refusals = struct {
	mu    sync.Mutex
	watch map[*nats.Conn]map[string]map[*context.CancelCauseFunc]bool
}{watch: map[*nats.Conn]map[string]map[*context.CancelCauseFunc]bool{}}

// ErrRefused is the error of a publish the server refused: these
// credentials may not publish on its subject.
var ErrRefused = errors.New("refused by the NATS server")

// heardRefusal passes nc's asynchronous error err to the publishes
// watching the subject it names, and reports whether one was: a refusal a
// call watches is that call's to tell.
func heardRefusal(nc *nats.Conn, err error) bool {
	if nc == nil || !errors.Is(err, nats.ErrPermissionViolation) {
		return false
	}
	// nats: permissions violation for publish to "SUBJECT"
	msg := err.Error()
	i := strings.Index(strings.ToLower(msg), "publish to \"")
	if i < 0 {
		return false
	}
	subj, _, _ := strings.Cut(msg[i+len("publish to \""):], "\"")
	refusals.mu.Lock()
	defer refusals.mu.Unlock()
	for cancel := range refusals.watch[nc][subj] {
		(*cancel)(fmt.Errorf("%w: %w", ErrRefused, err))
	}
	return len(refusals.watch[nc][subj]) > 0
}

// WatchRefusal returns a context of ctx that ends, with the refusal as
// its cause, when the server refuses a publish on subj over nc, and its
// stop.
func WatchRefusal(ctx context.Context, nc *nats.Conn, subj string) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	key := &cancel
	refusals.mu.Lock()
	if refusals.watch[nc] == nil {
		refusals.watch[nc] = map[string]map[*context.CancelCauseFunc]bool{}
	}
	if refusals.watch[nc][subj] == nil {
		refusals.watch[nc][subj] = map[*context.CancelCauseFunc]bool{}
	}
	refusals.watch[nc][subj][key] = true
	refusals.mu.Unlock()
	return ctx, func() {
		refusals.mu.Lock()
		delete(refusals.watch[nc][subj], key)
		if len(refusals.watch[nc][subj]) == 0 {
			delete(refusals.watch[nc], subj)
		}
		if len(refusals.watch[nc]) == 0 {
			delete(refusals.watch, nc)
		}
		refusals.mu.Unlock()
		cancel(nil)
	}
}

// RefusedCause is the refusal that ended ctx, if one did, else err.
func RefusedCause(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && errors.Is(cause, ErrRefused) {
		return cause
	}
	return err
}
