package natsstore

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// What a request or pull meets while a node is lost or a leader elected is
// asked again (retried, Commit's pull); a refusal is not.
func TestUnansweredTellsALostNodeFromARefusal(t *testing.T) {
	again := []error{context.DeadlineExceeded, nats.ErrTimeout, nats.ErrNoResponders, jetstream.ErrNoStreamResponse,
		jetstream.ErrServerShutdown, fmt.Errorf("commit t138: %w", jetstream.ErrServerShutdown),
		&jetstream.APIError{Code: 503, ErrorCode: 10008}}
	for _, err := range again {
		if !unanswered(err) {
			t.Errorf("%v is not asked again", err)
		}
	}
	refused := []error{errors.New("nats: wrong last sequence: 4"), jetstream.ErrMsgNotFound, &jetstream.APIError{Code: 400, ErrorCode: 10071}}
	for _, err := range refused {
		if unanswered(err) {
			t.Errorf("%v is asked again", err)
		}
	}
}
