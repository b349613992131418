package natsstore

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// attemptTimeout bounds one try of a request to the server: a request in
// flight to a node that goes down is never answered, and waiting for it
// the whole opTimeout would fail a call the cluster answers in a second
// once another node leads.
const attemptTimeout = 2 * time.Second

// retried runs op with a fresh attempt bound until it is answered, trying
// again while the cluster gives no answer (a stream or consumer leader
// lost, a connection moving to another node). Each op retried this way
// must be safe to repeat: a read, an ack, or a publish with a Nats-Msg-Id
// (a message stored and its try are one message). It gives up when ctx ends.
func retried[T any](ctx context.Context, op func(context.Context) (T, error)) (T, error) {
	for {
		try, cancel := context.WithTimeout(ctx, attemptTimeout)
		v, err := op(try)
		cancel()
		if err == nil || ctx.Err() != nil || !unanswered(err) {
			return v, err
		}
		if inProcess(err) {
			// The first try is still being applied: give it a moment.
			select {
			case <-ctx.Done():
				return v, err
			case <-time.After(inProcessWait):
			}
		}
	}
}

// inProcessWait is the pause before a publish tried again finds its
// first try still being applied.
const inProcessWait = 50 * time.Millisecond

// inProcess is the server's answer to a publish whose Nats-Msg-Id an
// earlier try still being applied holds (409, "duplicate message id is
// in process"): that try may or may not be stored yet. Tried again once
// it is applied, the publish is a duplicate of it, or stores the message.
func inProcess(err error) bool {
	var api *jetstream.APIError
	return errors.As(err, &api) && api.ErrorCode == jetstream.ErrorCode(10158)
}

// publishOnce stores data on subj with Nats-Msg-Id id, trying again with
// the same id while the cluster has no answer.
func publishOnce(ctx context.Context, js jetstream.JetStream, subj string, data []byte, id string) error {
	_, err := retried(ctx, func(ctx context.Context) (*jetstream.PubAck, error) {
		return js.Publish(ctx, subj, data, jetstream.WithMsgID(id))
	})
	return err
}

// unanswered is an error after which the request may or may not have been
// carried out: no reply in time, nobody to reply, or a cluster electing a
// leader.
func unanswered(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		(errors.As(err, &api) && api.Code == 503) || inProcess(err)
}
