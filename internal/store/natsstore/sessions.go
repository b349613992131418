package natsstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/inbox"
)

// Sessions is the agents' conversations of a team in a stream
// (agentteam_TEAM_sessions): a subject per agent,
// agentteam.TEAM.session.NAME, one message per append holding its lines
// (the JSON lines of sessions/NAME.jsonl, joined by newlines), so a
// teammate's conversation can be resumed on another host. Archiving an
// agent's session (a teammate spawned afresh under an earlier name) adds a
// marker on agentteam.TEAM.session.NAME.archived saying where the current
// session begins: nothing is moved or deleted, and each earlier session
// stays readable (Archived). It is safe for concurrent use; each agent has
// one writer.
type Sessions struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	team   string
}

// SessionSubject is the subject of agent's conversation in team.
func SessionSubject(team, agent string) string { return "agentteam." + team + ".session." + agent }

// archivedSubject holds agent's archive markers.
func archivedSubject(team, agent string) string { return SessionSubject(team, agent) + ".archived" }

// archiveMarker is one archive: the session up to stream sequence After
// was set aside at At.
type archiveMarker struct {
	After uint64    `json:"after"`
	At    time.Time `json:"at"`
}

// OpenSessions opens team's session stream on nc, creating it if it is not
// there. Replicas(n) keeps n copies (see OpenMailbox). nc stays the
// caller's to close.
func OpenSessions(ctx context.Context, nc *nats.Conn, team string, opts ...MailboxOption) (*Sessions, error) {
	if err := checkTeam(team); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open the sessions of %s: %w", team, err)
	}
	cfg := jetstream.StreamConfig{
		Name:        SessionStreamName(team),
		Subjects:    []string{"agentteam." + team + ".session.>"},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  2 * time.Minute,
		AllowDirect: true,
	}
	opts, existing, err := keepReplicas(ctx, js, cfg.Name, opts)
	if err != nil {
		return nil, fmt.Errorf("open the sessions of %s: %w", team, err)
	}
	for _, o := range opts {
		o(&cfg)
	}
	st, err := openStream(ctx, js, cfg, existing)
	if err != nil {
		return nil, fmt.Errorf("open the sessions of %s: stream: %w", team, replicaSentence(cfg.Replicas, err))
	}
	return &Sessions{nc: nc, js: js, stream: st, team: team}, nil
}

// SessionLog is one agent's conversation in the stream (the method set of
// loop.SessionLog). A log that Claims the conversation is its one writer:
// each of its appends expects the subject's last message to be its own,
// so once another writer claims it (a respawn elsewhere), an append of
// this one — even one held up in the network and delivered late — is
// refused by the server (a *FencedError).
type SessionLog struct {
	s    *Sessions
	name string

	mu      sync.Mutex
	claimed bool
	last    uint64 // the subject's last message, this log's own, once claimed
}

// claimHeader marks a claim: a message of no lines on the agent's subject.
const claimHeader = "Agentteam-Claim"

// FencedError is a write refused because another writer claimed the
// agent (its conversation, or the messages it sends) since this one did.
type FencedError struct{ Agent string }

func (e *FencedError) Error() string {
	return fmt.Sprintf("%s was claimed by another writer (its respawn): this one may no longer write for it", e.Agent)
}

// Fenced tells the agent loop to stop: its conversation goes on elsewhere.
func (e *FencedError) Fenced() bool { return true }

// Claim makes this log the conversation's one writer: it stores an empty
// message after the subject's last, so that every earlier writer's next
// append, expecting its own last message, is refused.
func (l *SessionLog) Claim(ctx context.Context) error {
	if err := inbox.ValidateName(l.name); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	subj := SessionSubject(l.s.team, l.name)
	for range maxCASTries {
		var last uint64
		raw, err := retried(ctx, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
			return l.s.stream.GetLastMsgForSubject(ctx, subj)
		})
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
		case err != nil:
			return fmt.Errorf("claim the session of %s: %w", l.name, err)
		default:
			last = raw.Sequence
		}
		m := nats.NewMsg(subj)
		m.Header.Set(claimHeader, "1")
		seq, err := l.publishAfter(ctx, m, last)
		if wrongLastSeq(err) {
			continue // written meanwhile (or a stale read): look again
		}
		if err != nil {
			return fmt.Errorf("claim the session of %s: %w", l.name, err)
		}
		l.mu.Lock()
		l.claimed, l.last = true, seq
		l.mu.Unlock()
		return nil
	}
	return fmt.Errorf("claim the session of %s: lost the race %d times in a row", l.name, maxCASTries)
}

// publishAfter stores a message like m if the subject's last message is
// last, with an id of its own sent again (hedged) while the server does
// not answer, and returns its sequence.
func (l *SessionLog) publishAfter(ctx context.Context, m *nats.Msg, last uint64) (uint64, error) {
	id, err := newID()
	if err != nil {
		return 0, err
	}
	msg := func() *nats.Msg { return &nats.Msg{Subject: m.Subject, Data: m.Data, Header: maps.Clone(m.Header)} }
	own := func(ctx context.Context) (uint64, bool) {
		return ownLast(ctx, l.s.nc, SessionStreamName(l.s.team), m.Subject, id)
	}
	return publishHedged(ctx, l.s.js, msg, id, attemptTimeout, own, jetstream.WithExpectLastSequencePerSubject(last))
}

// Log is agent's conversation. A name that is no subject token is refused
// by every call.
func (s *Sessions) Log(agent string) *SessionLog { return &SessionLog{s: s, name: agent} }

// AppendLines stores lines as one message on the agent's subject and
// returns once the server has it. The message carries an id of its own, so
// a publish sent again after a lost answer is stored once. Lines over the
// server's largest message go as several messages of whole lines (a crash
// between them leaves the first part, as a torn write would); one line
// over it is refused.
func (l *SessionLog) AppendLines(ctx context.Context, lines [][]byte) error {
	if len(lines) == 0 {
		return nil
	}
	if err := inbox.ValidateName(l.name); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	limit := int(l.s.nc.MaxPayload()) - 1024 // room for the headers
	for len(lines) > 0 {
		n, size := 0, 0
		for n < len(lines) && (n == 0 || size+1+len(lines[n]) <= limit) {
			size += 1 + len(lines[n])
			n++
		}
		if len(lines[0]) > limit {
			return fmt.Errorf("record the session of %s: a message of %d bytes is over the %d the NATS server takes (its max_payload)", l.name, len(lines[0]), limit)
		}
		data := bytes.Join(lines[:n], []byte{'\n'})
		l.mu.Lock()
		claimed, last := l.claimed, l.last
		l.mu.Unlock()
		if claimed {
			m := nats.NewMsg(SessionSubject(l.s.team, l.name))
			m.Data = data
			seq, err := l.publishAfter(ctx, m, last)
			if wrongLastSeq(err) {
				return fmt.Errorf("record the session of %s: %w", l.name, &FencedError{Agent: l.name})
			}
			if err != nil {
				return fmt.Errorf("record the session of %s: %w", l.name, err)
			}
			l.mu.Lock()
			l.last = seq
			l.mu.Unlock()
		} else {
			id, err := newID()
			if err != nil {
				return err
			}
			if err := publishOnce(ctx, l.s.js, SessionSubject(l.s.team, l.name), data, id); err != nil {
				return fmt.Errorf("record the session of %s: %w", l.name, err)
			}
		}
		lines = lines[n:]
	}
	return nil
}

// Lines returns the lines of the agent's current session (since its last
// archive), oldest first.
func (l *SessionLog) Lines(ctx context.Context) ([][]byte, error) {
	if err := inbox.ValidateName(l.name); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	markers, err := l.s.markers(ctx, l.name)
	if err != nil {
		return nil, err
	}
	var from uint64
	if len(markers) > 0 {
		from = markers[len(markers)-1].After
	}
	lines, _, err := l.s.read(ctx, l.name, from+1, 0)
	return lines, err
}

// Close holds nothing open: it returns nil.
func (l *SessionLog) Close() error { return nil }

// read returns the lines of agent's messages with stream sequences from
// from to to (0: to the end), and the sequence of the last one read.
func (s *Sessions) read(ctx context.Context, agent string, from, to uint64) ([][]byte, uint64, error) {
	subj := SessionSubject(s.team, agent)
	var lines [][]byte
	var last uint64
	for seq := from; to == 0 || seq <= to; {
		raw, err := retried(ctx, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
			return s.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
		})
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("read the session of %s: %w", agent, err)
		}
		if to != 0 && raw.Sequence > to {
			break
		}
		for _, line := range bytes.Split(raw.Data, []byte{'\n'}) {
			if len(line) > 0 {
				lines = append(lines, line)
			}
		}
		last, seq = raw.Sequence, raw.Sequence+1
	}
	return lines, last, nil
}

// markers are agent's archive markers, oldest first; a marker that does
// not parse (written by someone else) is skipped.
func (s *Sessions) markers(ctx context.Context, agent string) ([]archiveMarker, error) {
	subj := archivedSubject(s.team, agent)
	var out []archiveMarker
	for seq := uint64(1); ; {
		raw, err := retried(ctx, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
			return s.stream.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subj))
		})
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the archives of %s: %w", agent, err)
		}
		var m archiveMarker
		if json.Unmarshal(raw.Data, &m) == nil && m.After < raw.Sequence && (len(out) == 0 || m.After > out[len(out)-1].After) {
			out = append(out, m)
		}
		seq = raw.Sequence + 1
	}
}

// Archive sets agent's current session aside, if it holds anything: the
// next Lines starts empty, and Archived lists it. The agent must not be
// writing meanwhile (it is called before a teammate starts afresh).
func (s *Sessions) Archive(ctx context.Context, agent string, now time.Time) error {
	if err := inbox.ValidateName(agent); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	raw, err := retried(ctx, func(ctx context.Context) (*jetstream.RawStreamMsg, error) {
		return s.stream.GetLastMsgForSubject(ctx, SessionSubject(s.team, agent))
	})
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil // no session yet
	}
	if err != nil {
		return fmt.Errorf("archive the session of %s: %w", agent, err)
	}
	markers, err := s.markers(ctx, agent)
	if err != nil {
		return err
	}
	if len(markers) > 0 && markers[len(markers)-1].After >= raw.Sequence {
		return nil // nothing written since the last archive
	}
	data, err := json.Marshal(archiveMarker{After: raw.Sequence, At: now.UTC()})
	if err != nil {
		return err
	}
	id, err := newID()
	if err != nil {
		return err
	}
	if err := publishOnce(ctx, s.js, archivedSubject(s.team, agent), data, id); err != nil {
		return fmt.Errorf("archive the session of %s: %w", agent, err)
	}
	return nil
}

// ArchivedSession is one earlier session of an agent.
type ArchivedSession struct {
	At    time.Time // when it was set aside
	Lines [][]byte
}

// Archived returns agent's earlier sessions, oldest first.
func (s *Sessions) Archived(ctx context.Context, agent string) ([]ArchivedSession, error) {
	if err := inbox.ValidateName(agent); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	markers, err := s.markers(ctx, agent)
	if err != nil {
		return nil, err
	}
	var out []ArchivedSession
	var from uint64
	for _, m := range markers {
		lines, _, err := s.read(ctx, agent, from+1, m.After)
		if err != nil {
			return nil, err
		}
		out = append(out, ArchivedSession{At: m.At, Lines: lines})
		from = m.After
	}
	return out, nil
}
