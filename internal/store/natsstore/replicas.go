package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/store/natsconn"
)

// replicasOf is the replica count opts ask for; 0 when none does.
func replicasOf(opts []MailboxOption) int {
	var c jetstream.StreamConfig
	for _, o := range opts {
		o(&c)
	}
	return c.Replicas
}

// keepReplicas is opts, or, when they ask for no replica count, opts with
// the count of the stream already named name (so that a client that says
// nothing does not scale a team's copies down to one); and that stream, nil
// when there is none. A stream that cannot be looked up is an error:
// opening it with one copy might change it.
func keepReplicas(ctx context.Context, js jetstream.JetStream, name string, opts []MailboxOption) ([]MailboxOption, jetstream.Stream, error) {
	st, err := retried(ctx, func(ctx context.Context) (jetstream.Stream, error) { return js.Stream(ctx, name) })
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return opts, nil, nil
	case err != nil:
		return nil, nil, fmt.Errorf("look up stream %s: %w", name, err)
	}
	if replicasOf(opts) > 0 {
		return opts, st, nil
	}
	if n := st.CachedInfo().Config.Replicas; n > 1 {
		return append(opts, Replicas(n)), st, nil
	}
	return opts, st, nil
}

// openStream is the stream cfg describes: the existing one as it is when
// it already has cfg's subjects, copies and reads, else created or updated.
// An update is not sent needlessly: every command opens the team's
// streams, each update is a proposal to the cluster, and nats-server
// v2.15.2 updates a stream's config unlocked while another client's
// consumer is being created on it (a data race seen under -race).
//
// A stream there is none of is created, never updated: a worker's and a
// person's credentials may create the team's streams, not change them
// (natsconn/roles.go).
func openStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig, existing jetstream.Stream) (jetstream.Stream, error) {
	if existing != nil && sameStream(existing.CachedInfo().Config, cfg) {
		return existing, nil
	}
	if existing == nil {
		create := func(ctx context.Context) (jetstream.Stream, error) {
			st, err := js.CreateStream(ctx, cfg)
			if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
				// Made meanwhile by another, unlike cfg: changed as below.
				return updateStream(ctx, js, cfg)
			}
			return st, err
		}
		// Made meanwhile by another process, it may not be known yet
		// to the node that answers the update.
		return knownSoon(ctx, create)
	}
	return retried(ctx, func(ctx context.Context) (jetstream.Stream, error) { return updateStream(ctx, js, cfg) })
}

// justMadeWait is how long a stream made a moment ago may go unseen.
const justMadeWait = 5 * time.Second

// knownSoon is retried's op, asked again for up to justMadeWait while it
// answers that the stream is not there: a stream made a moment ago may not
// be known yet to the node that answers (a cluster's nodes learn it from
// the meta leader), and its absence is then no answer.
func knownSoon[T any](ctx context.Context, op func(context.Context) (T, error)) (T, error) {
	v, err := retried(ctx, op)
	for wait := time.Now().Add(justMadeWait); errors.Is(err, jetstream.ErrStreamNotFound) && time.Now().Before(wait) && ctx.Err() == nil; {
		time.Sleep(50 * time.Millisecond)
		v, err = retried(ctx, op)
	}
	return v, err
}

// updateStream changes a stream to cfg, or says in one sentence that
// these credentials may not.
func updateStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	ctx, stop := natsconn.WatchRefusal(ctx, js.Conn(), "$JS.API.STREAM.UPDATE."+cfg.Name)
	defer stop()
	st, err := js.UpdateStream(ctx, cfg)
	if cause := natsconn.RefusedCause(ctx, err); err != nil && cause != err {
		return nil, notChanged(cfg.Name, cause)
	}
	return st, err
}

// notChanged says that these credentials may not bring stream to what
// agentteam makes it (the lead's may).
func notChanged(stream string, cause error) error {
	return fmt.Errorf("stream %s is not as this agentteam makes it, and these credentials may not change it: run the team's lead (agentteam run) once, with the lead's credentials (%w)", stream, cause)
}

// plain reports whether cfg moves no message elsewhere: no subject
// transform, republish, mirror or source. A stream made by credentials
// that may create but not change it (a worker's) could otherwise rename a
// sender or a key; such a stream is taken as not agentteam's, and changed.
func plain(cfg jetstream.StreamConfig) bool {
	return cfg.SubjectTransform == nil && cfg.RePublish == nil && cfg.Mirror == nil && len(cfg.Sources) == 0
}

// sameStream reports whether have already is what want asks for, in the
// settings agentteam sets.
func sameStream(have, want jetstream.StreamConfig) bool {
	if !plain(have) || max(have.Replicas, 1) != max(want.Replicas, 1) || have.AllowDirect != want.AllowDirect ||
		have.Storage != want.Storage || have.Retention != want.Retention ||
		want.Duplicates != 0 && have.Duplicates != want.Duplicates || len(have.Subjects) != len(want.Subjects) ||
		want.MaxConsumers != 0 && have.MaxConsumers != want.MaxConsumers {
		return false
	}
	for i := range want.Subjects {
		if have.Subjects[i] != want.Subjects[i] {
			return false
		}
	}
	return true
}

// JetStream's error codes for replicas a server cannot hold.
const (
	codeReplicasNotSupported jetstream.ErrorCode = 10074 // one server, not a cluster
	codeInsufficientPeers    jetstream.ErrorCode = 10023 // fewer nodes than copies
	codeDuplicateInFlight    jetstream.ErrorCode = 10158 // a message with this id is being stored
	codeIncompleteBatch      jetstream.ErrorCode = 10176 // an atomic batch the server did not get whole
)

// replicaSentence turns the server's refusal of n copies into a sentence
// that says what to do; any other error is returned as it is.
func replicaSentence(n int, err error) error {
	var api *jetstream.APIError
	if err == nil || n <= 1 || !errors.As(err, &api) {
		return err
	}
	switch api.ErrorCode {
	case codeReplicasNotSupported:
		return fmt.Errorf("%d copies need a JetStream cluster, and this server runs alone: drop ?replicas or join it to a cluster (agentteam serve --routes): %w", n, err)
	case codeInsufficientPeers:
		return fmt.Errorf("%d copies need a cluster of at least %d JetStream nodes up, and this one has fewer: use fewer copies or add nodes: %w", n, n, err)
	}
	return err
}

// storedMsg is one message as the stream's leader returns it.
type storedMsg struct {
	Subject string    `json:"subject"`
	Seq     uint64    `json:"seq"`
	Data    []byte    `json:"data"`
	Header  []byte    `json:"hdrs"`
	Time    time.Time `json:"time"`
}

// leaderMsg is the stored message the stream's leader answers a get with.
type leaderMsg struct {
	Message *storedMsg          `json:"message"`
	Error   *jetstream.APIError `json:"error"`
}

// lastFromLeader reads the last message on subj of stream from the
// stream's leader (no direct get: a copy a moment behind would answer with
// an old revision, and a compare-and-set built on it would lose forever).
// found is false when there is none; while the stream has no leader it
// asks again until ctx ends.
func lastFromLeader(ctx context.Context, nc *nats.Conn, stream, subj string) (m storedMsg, found bool, err error) {
	return getFromLeader(ctx, nc, stream, map[string]any{"last_by_subj": subj})
}

// seqFromLeader reads stream's message seq from its leader; found is
// false when there is none (never stored, or removed since).
func seqFromLeader(ctx context.Context, nc *nats.Conn, stream string, seq uint64) (m storedMsg, found bool, err error) {
	return getFromLeader(ctx, nc, stream, map[string]any{"seq": seq})
}

// getFromLeader asks stream's leader for the message the request names.
func getFromLeader(ctx context.Context, nc *nats.Conn, stream string, get map[string]any) (m storedMsg, found bool, err error) {
	req, err := json.Marshal(get)
	if err != nil {
		return m, false, err
	}
	r, err := retried(ctx, func(ctx context.Context) (leaderMsg, error) {
		var r leaderMsg
		msg, err := nc.RequestWithContext(ctx, "$JS.API.STREAM.MSG.GET."+stream, req)
		if err != nil {
			return r, err
		}
		if err := json.Unmarshal(msg.Data, &r); err != nil {
			return r, fmt.Errorf("the server's answer is not JSON: %w", err)
		}
		if r.Error != nil && r.Error.ErrorCode != jetstream.JSErrCodeMessageNotFound {
			return r, r.Error
		}
		return r, nil
	})
	switch {
	case err != nil:
		return m, false, err
	case r.Error != nil: // not found
		return m, false, nil
	case r.Message == nil:
		return m, false, errors.New("the server answered with no message")
	}
	return *r.Message, true, nil
}
