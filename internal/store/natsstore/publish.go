package natsstore

import (
	"bytes"
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
	return errors.As(err, &api) && api.ErrorCode == codeDuplicateInFlight
}

// publishOnce stores data on subj with Nats-Msg-Id id, trying again with
// the same id while the cluster has no answer.
func publishOnce(ctx context.Context, js jetstream.JetStream, subj string, data []byte, id string) error {
	_, err := publishHedged(ctx, js, func() *nats.Msg { return &nats.Msg{Subject: subj, Data: data} }, id, attemptTimeout, nil)
	return err
}

// maxWaiting bounds the tries of one publish waiting for their answers
// at once.
const maxWaiting = 8

// publishHedged stores the message msg makes (afresh for each try) with
// Nats-Msg-Id id and opts, and returns its sequence. A try not answered
// within attempt is sent again while the earlier ones still wait for
// theirs (hedged): a request lost with a node is answered by the next,
// and the late answer of a busy process (its CPU taken by its work, its
// reads late) still counts, which a try given up would not. The server
// checks an expected sequence before it drops a duplicate, so a try
// refused for the sequence when another was sent may be refused because
// that other was stored: own, if not nil, then says whether the last
// message is this one, and its sequence.
func publishHedged(ctx context.Context, js jetstream.JetStream, msg func() *nats.Msg, id string, attempt time.Duration,
	own func(context.Context) (uint64, bool), opts ...jetstream.PublishOpt) (uint64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the tries still waiting
	type answer struct {
		ack *jetstream.PubAck
		err error
	}
	answers := make(chan answer, maxWaiting) // each try waiting has room for its answer
	opts = append(opts, jetstream.WithMsgID(id))
	tries, waiting := 0, 0
	send := func() {
		tries++
		waiting++
		go func() {
			ack, err := js.PublishMsg(ctx, msg(), opts...)
			answers <- answer{ack, err}
		}()
	}
	send()
	next := time.NewTimer(attempt)
	defer next.Stop()
	var refused, last error
	for {
		select {
		case a := <-answers:
			waiting--
			switch {
			case a.err == nil:
				return a.ack.Sequence, nil
			case wrongLastSeq(a.err) && tries > 1:
				refused = a.err
			case unanswered(a.err) && ctx.Err() == nil:
				last = a.err // no answer (a node lost, a leader elected, a try in process)
			default:
				return 0, a.err
			}
			if waiting > 0 {
				continue
			}
			if refused != nil {
				if own != nil {
					if seq, ok := own(ctx); ok {
						return seq, nil
					}
				}
				return 0, refused
			}
			select { // every try failed at once: again in a moment, until ctx ends
			case <-ctx.Done():
				return 0, last
			case <-time.After(inProcessWait):
			}
			send()
			next.Reset(attempt)
		case <-next.C:
			if waiting < maxWaiting {
				send()
			}
			next.Reset(attempt)
		case <-ctx.Done():
			if last == nil {
				last = ctx.Err()
			}
			return 0, last
		}
	}
}

// casPublish stores the message msg makes (afresh for each try) if the
// last sequence of its subject in stream is still rev, and returns its
// sequence. It carries an id of its own and is sent again with it while the
// cluster gives no answer (retried): a try stored before is then a
// duplicate, not stored twice; and a resend refused for the revision is
// asked whether a try of its own is what moved it (landed), which is
// success, not a lost race.
func casPublish(ctx context.Context, js jetstream.JetStream, nc *nats.Conn, stream string, msg func() *nats.Msg, rev uint64) (uint64, error) {
	id, err := newID()
	if err != nil {
		return 0, err
	}
	subj, sent := msg().Subject, 0
	ack, err := retried(ctx, func(ctx context.Context) (*jetstream.PubAck, error) {
		sent++
		return js.PublishMsg(ctx, msg(), jetstream.WithMsgID(id), jetstream.WithExpectLastSequencePerSubject(rev))
	})
	if err == nil {
		return ack.Sequence, nil
	}
	if wrongLastSeq(err) && sent > 1 {
		if seq, ok := ownLast(ctx, nc, stream, subj, id); ok {
			return seq, nil
		}
	}
	return 0, err
}

// ownLast reports whether the last message on subj in stream is the one
// published with Nats-Msg-Id id, and its sequence.
func ownLast(ctx context.Context, nc *nats.Conn, stream, subj, id string) (uint64, bool) {
	return landed(ctx, nc, stream, subj, jetstream.MsgIDHeader, id)
}

// landed is the one check of "did my write land" for a write whose answer
// was lost or that a resend found refused: whether the last message on
// subj in stream, read from the stream's leader, carries header with one
// of ids (each try's), and its sequence. A later writer's message on subj
// hides ours: then it says no, and the caller's compare-and-set decides
// again on what is stored.
func landed(ctx context.Context, nc *nats.Conn, stream, subj, header string, ids ...string) (uint64, bool) {
	m, found, err := lastFromLeader(ctx, nc, stream, subj)
	if err != nil || !found {
		return 0, false
	}
	for _, id := range ids {
		// Each header line follows a CRLF (the first follows "NATS/1.0").
		if bytes.Contains(m.Header, []byte("\r\n"+header+": "+id+"\r\n")) {
			return m.Seq, true
		}
	}
	return 0, false
}

// unanswered is an error after which the request may or may not have been
// carried out: no reply in time, nobody to reply, or a cluster electing a
// leader.
func unanswered(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		// A pull waiting at a node that shuts down: its consumer goes on
		// with a leader elsewhere (a teammate failed with "commit t138:
		// nats: server shutdown" in the 300-teammate failover run).
		errors.Is(err, jetstream.ErrServerShutdown) ||
		(errors.As(err, &api) && api.Code == 503) || inProcess(err)
}
