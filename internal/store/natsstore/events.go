package natsstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// EventLog is a team's event log as a stream (agentteam_TEAM_events, one
// subject agentteam.TEAM.events): each event one message whose data is the
// line events.jsonl would hold. It is safe for concurrent use, and any
// number of EventLogs (in any number of processes) may share a team.
type EventLog struct {
	js     jetstream.JetStream
	stream jetstream.Stream
	subj   string
}

// EventStreamName is the name of team's event stream.
func EventStreamName(team string) string { return "agentteam_" + team + "_events" }

// EventSubject is the subject of team's events.
func EventSubject(team string) string { return "agentteam." + team + ".events" }

// OpenEventLog opens team's event log on nc, creating the stream if it is
// not there. Replicas(n) keeps n copies (an existing stream is changed to
// n); without it a new stream has one and an existing one keeps its count.
// nc stays the caller's to close.
func OpenEventLog(ctx context.Context, nc *nats.Conn, team string, opts ...MailboxOption) (*EventLog, error) {
	if err := checkTeam(team); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open the event log of %s: %w", team, err)
	}
	cfg := jetstream.StreamConfig{
		Name:        EventStreamName(team),
		Subjects:    []string{EventSubject(team)},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		AllowDirect: true,
	}
	opts, existing, err := keepReplicas(ctx, js, cfg.Name, opts)
	if err != nil {
		return nil, fmt.Errorf("open the event log of %s: %w", team, err)
	}
	for _, o := range opts {
		o(&cfg)
	}
	st, err := openStream(ctx, js, cfg, existing)
	if err != nil {
		return nil, fmt.Errorf("open the event log of %s: stream: %w", team, replicaSentence(cfg.Replicas, err))
	}
	return &EventLog{js: js, stream: st, subj: EventSubject(team)}, nil
}

// AppendLine stores one event line (without its newline) and returns once
// the server has it.
func (l *EventLog) AppendLine(ctx context.Context, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	id, err := newID()
	if err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	// Sent again with its id while the cluster gives no answer (a node
	// lost, a leader being elected): one try was a lost line then.
	if err := publishOnce(ctx, l.js, l.subj, data, id); err != nil {
		return fmt.Errorf("event log: %w", err)
	}
	return nil
}

// Lines returns every event line stored, oldest first.
func (l *EventLog) Lines(ctx context.Context) ([][]byte, error) {
	var out [][]byte
	for seq := uint64(1); ; {
		raw, err := l.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(l.subj))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("read the event log: %w", err)
		}
		out = append(out, raw.Data)
		seq = raw.Sequence + 1
	}
}

// Follow returns a reader of the event lines: its first call returns the
// last backlog lines stored now, each later one the lines stored since
// the call before (at most a thousand a call; the rest come next).
func (l *EventLog) Follow(ctx context.Context, backlog uint64) (func(ctx context.Context) ([][]byte, error), error) {
	info, err := l.stream.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the event log: %w", err)
	}
	next := uint64(1)
	if last := info.State.LastSeq; last > backlog {
		next = last - backlog + 1
	}
	return func(ctx context.Context) ([][]byte, error) {
		var out [][]byte
		for len(out) < 1000 {
			raw, err := l.stream.GetMsg(ctx, next, jetstream.WithGetMsgSubject(l.subj))
			if errors.Is(err, jetstream.ErrMsgNotFound) {
				break
			}
			if err != nil {
				return out, fmt.Errorf("read the event log: %w", err)
			}
			out = append(out, raw.Data)
			next = raw.Sequence + 1
		}
		return out, nil
	}, nil
}
