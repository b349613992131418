// Package natsstore keeps a team's inboxes in NATS JetStream, so that
// teammates on several hosts share them. It is the same contract
// as the files (internal/store/storetest): a stream per team with one subject per
// inbox, each message published with Nats-Msg-Id = its id, and a durable
// consumer per agent whose acknowledged position is the read position.
// Beside the inboxes it keeps the team's other state there (documents,
// registry entries, events, sessions, leases, work queue). Connecting to
// the server is natsconn's; running it and its permissions, natsserver's.
package natsstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsconn"
)

// opTimeout bounds one store call to the server, so that a server gone
// away is an error after this long, not a hang; an inbox call also ends
// with its caller's context.
const opTimeout = 10 * time.Second

// ackWait is how long a message handed to a commit that never finished (its
// process died between fetching and acknowledging) stays held before the
// server offers it again.
const ackWait = 30 * time.Second

// maxInboxConsumers bounds the agents (and watchers) of one team's inboxes.
const maxInboxConsumers = 1_000_000

// Mailbox is the inboxes of one team in JetStream. Its zero value is not
// usable; open one with OpenMailbox. It is safe for concurrent use, and any
// number of Mailboxes (in any number of processes) may share a team.
type Mailbox struct {
	nc     *nats.Conn
	js     jetstream.JetStream
	stream jetstream.Stream
	team   string

	mu        sync.Mutex
	consumers map[string]jetstream.Consumer
	floors    map[string]uint64 // the highest read position seen of each inbox (sawFloor)

	// direct: the stream answers direct gets (one copy, as GetMsg finds
	// it at open), so reads ask for many messages at a time through gets.
	direct bool
	gets   *batchGets

	// unnamed are the inboxes holding messages stored before senders were
	// named in subjects, seen at open: nothing publishes there since.
	unnamed map[string]bool
}

// hasUnnamed reports whether name's inbox holds messages of before
// senders were named.
func (mb *Mailbox) hasUnnamed(name string) bool { return mb.unnamed[name] }

// StreamName is the name of team's stream.
func StreamName(team string) string { return "agentteam_" + team }

// Subject is the subject of the messages to agent's inbox in team that
// no sender is named in: those stored before senders were (see SentSubject).
func Subject(team, agent string) string { return "agentteam." + team + ".inbox." + agent }

// SentSubject is the subject of a message from sender to agent's inbox in
// team: the sender is in the subject, so the server's permissions of the
// credentials that publish it say who may send as whom (natsconn/roles.go), and a
// reader takes the sender from where the server stored the message.
func SentSubject(team, agent, sender string) string { return Subject(team, agent) + "." + sender }

// inboxFilter is every message to agent's inbox in team sent since
// senders are named, from anyone.
func inboxFilter(team, agent string) string { return SentSubject(team, agent, "*") }

// MailboxOption changes how OpenMailbox, OpenDocWith and OpenEventLog
// create their stream or bucket.
type MailboxOption func(*jetstream.StreamConfig)

// Replicas keeps n copies of the stream on n nodes of a cluster (1, 3 or
// 5), so it outlives the loss of a minority of them. With copies, reads go
// to the stream's leader, not to any copy (direct get): a copy a moment
// behind would not yet hold the message its reader was just woken for.
func Replicas(n int) MailboxOption {
	return func(c *jetstream.StreamConfig) {
		c.Replicas = n
		c.AllowDirect = n <= 1
	}
}

// OpenMailbox opens team's inboxes on nc, creating the stream if it is not
// there. Replicas(n) keeps n copies (an existing stream is changed to n);
// without it a new stream has one and an existing one keeps its count;
// while a cluster elects a leader it asks again until ctx ends. nc
// stays the caller's to close.
func OpenMailbox(ctx context.Context, nc *nats.Conn, team string, opts ...MailboxOption) (*Mailbox, error) {
	if err := checkTeam(team); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open inboxes of %s: %w", team, err)
	}
	cfg := jetstream.StreamConfig{
		Name: StreamName(team),
		// The senders' claims live beside the inboxes, so that a message's
		// store can check its sender's (senders.go).
		// An inbox's messages name their sender (SentSubject); those of
		// before stay where they were stored, read beside them.
		Subjects:    []string{"agentteam." + team + ".inbox.*", "agentteam." + team + ".inbox.*.*", senderSubject(team, "*")},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  2 * time.Minute,
		AllowDirect: true,
		// A consumer per agent: the server's default bound (1,000 a
		// stream) would cap a team's size; only a bound of its own on the
		// stream lifts it (-1 counts as unset).
		MaxConsumers: maxInboxConsumers,
	}
	opts, existing, err := keepReplicas(ctx, js, cfg.Name, opts)
	if err != nil {
		return nil, fmt.Errorf("open inboxes of %s: %w", team, err)
	}
	for _, o := range opts {
		o(&cfg)
	}
	st, err := openStream(ctx, js, cfg, existing)
	if err != nil {
		return nil, fmt.Errorf("open inboxes of %s: stream: %w", team, replicaSentence(cfg.Replicas, err))
	}
	unnamed, err := unnamedInboxes(ctx, st, team)
	if err != nil {
		return nil, fmt.Errorf("open inboxes of %s: %w", team, err)
	}
	return &Mailbox{nc: nc, js: js, stream: st, team: team, consumers: map[string]jetstream.Consumer{}, floors: map[string]uint64{},
		direct: st.CachedInfo().Config.AllowDirect, gets: newBatchGets(nc, cfg.Name), unnamed: unnamed}, nil
}

// unnamedInboxes are the inboxes of st holding a message stored before
// senders were named in subjects.
func unnamedInboxes(ctx context.Context, st jetstream.Stream, team string) (map[string]bool, error) {
	prefix := "agentteam." + team + ".inbox."
	info, err := knownSoon(ctx, func(ctx context.Context) (*jetstream.StreamInfo, error) {
		return st.Info(ctx, jetstream.WithSubjectFilter(prefix+"*"))
	})
	if err != nil {
		return nil, err
	}
	unnamed := map[string]bool{}
	for subj := range info.State.Subjects {
		unnamed[strings.TrimPrefix(subj, prefix)] = true
	}
	return unnamed, nil
}

// checkToken refuses a name that cannot be one token of a subject or part
// of a stream or consumer name: only letters, digits, '-' and '_'. It is
// for the names of teams, buckets, leases, workers and users; an agent's
// name meets inbox.ValidateName, the rule of every store.
func checkToken(what, name string) error {
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%s name %q: empty or over 64 bytes: %w", what, name, inbox.ErrInvalid)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("%s name %q: only letters, digits, '-' and '_' may be used: %w", what, name, inbox.ErrInvalid)
		}
	}
	return nil
}

// consumer returns name's durable consumer, creating it the first time.
// It acknowledges all up to a sequence at once (AckAll), so its ack floor
// is one number: the read position. The first call in this Mailbox looks
// the consumer up (made by another process, it is not updated unless its
// settings differ: an update is a write of its state on the server) and
// returns that info too, fresh; later calls return nil info.
func (mb *Mailbox) consumer(ctx context.Context, name string) (jetstream.Consumer, *jetstream.ConsumerInfo, error) {
	mb.mu.Lock()
	c, ok := mb.consumers[name]
	mb.mu.Unlock()
	if ok {
		return c, nil, nil
	}
	want := consumerConfig(mb.team, name)
	c, err := retried(ctx, func(ctx context.Context) (jetstream.Consumer, error) {
		return mb.stream.Consumer(ctx, want.Durable)
	})
	if err == nil && !sameConsumer(c.CachedInfo().Config, want) {
		c, err = nil, jetstream.ErrConsumerNotFound
	}
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		c, err = retried(ctx, func(ctx context.Context) (jetstream.Consumer, error) {
			return mb.stream.CreateOrUpdateConsumer(ctx, want)
		})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("inbox %s: consumer: %w", name, err)
	}
	mb.mu.Lock()
	mb.consumers[name] = c
	mb.mu.Unlock()
	return c, c.CachedInfo(), nil
}

// sameConsumer reports whether have holds every setting consumerConfig
// gives (the server fills in the others).
func sameConsumer(have, want jetstream.ConsumerConfig) bool {
	return have.Durable == want.Durable && have.FilterSubject == want.FilterSubject && slices.Equal(have.FilterSubjects, want.FilterSubjects) &&
		have.DeliverPolicy == want.DeliverPolicy && have.AckPolicy == want.AckPolicy && have.AckWait == want.AckWait &&
		have.MaxDeliver == want.MaxDeliver && have.MaxAckPending == want.MaxAckPending
}

// consumerConfig is name's durable consumer in team's stream.
func consumerConfig(team, name string) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:        "inbox_" + name,
		FilterSubjects: []string{Subject(team, name), inboxFilter(team, name)},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		AckPolicy:      jetstream.AckAllPolicy,
		AckWait:        ackWait,
		MaxDeliver:     -1,
		MaxAckPending:  -1,
	}
}

// Append publishes m to name's inbox, filling ID, Timestamp and To when
// empty, and returns once the server has stored it. The id is the
// message's Nats-Msg-Id, so a publish repeated after a lost reply is stored
// once.
func (mb *Mailbox) Append(ctx context.Context, name string, m inbox.Message) (inbox.Message, error) {
	m, line, err := mb.encodeAppend(name, m)
	if err != nil {
		return inbox.Message{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	subj := SentSubject(mb.team, name, m.From)
	ctx, stop := natsconn.WatchRefusal(ctx, mb.nc, subj)
	defer stop()
	if err := publishOnce(ctx, mb.js, subj, line, m.ID); err != nil {
		return inbox.Message{}, fmt.Errorf("message to %s: %w", name, sendRefused(ctx, m.From, err))
	}
	return m, nil
}

// sendRefused says, for a message the server refused, that these
// credentials may not send as from; any other error is err.
func sendRefused(ctx context.Context, from string, err error) error {
	if cause := natsconn.RefusedCause(ctx, err); cause != err {
		return fmt.Errorf("these credentials may not send as %s (%w)", from, cause)
	}
	return err
}

// encodeAppend is the first steps of Append and AppendAs: name checked
// (a token of its subject), then m checked (its sender is a token of the
// sender's claim), given its id and time and encoded as its line. A line over what
// the server takes is refused as inbox.ErrTooLarge with what to do: NATS's
// client says only "maximum payload exceeded", and the same message goes
// in on another server.
func (mb *Mailbox) encodeAppend(name string, m inbox.Message) (inbox.Message, []byte, error) {
	if err := inbox.ValidateName(name); err != nil {
		return inbox.Message{}, nil, err
	}
	m, line, err := inbox.Encode(name, m)
	if err != nil {
		return m, nil, err
	}
	if limit := int(mb.nc.MaxPayload()) - headerRoom; len(line) > limit {
		return inbox.Message{}, nil, fmt.Errorf("message to %s: it is %d bytes as JSON, over the %d the NATS server takes (its max_payload): put large content in a file in the workspace and send its path: %w",
			name, len(line), limit, inbox.ErrTooLarge)
	}
	return m, line, nil
}

// Names lists the inboxes that hold a message, sorted.
func (mb *Mailbox) Names(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	prefix := "agentteam." + mb.team + ".inbox."
	info, err := mb.stream.Info(ctx, jetstream.WithSubjectFilter(prefix+">"))
	if err != nil {
		return nil, fmt.Errorf("list the inboxes of %s: %w", mb.team, err)
	}
	names := make([]string, 0, len(info.State.Subjects))
	for subj := range info.State.Subjects {
		rest, ok := strings.CutPrefix(subj, prefix)
		name, _, _ := strings.Cut(rest, ".")
		if ok && inbox.ValidateName(name) == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// Path names name's inbox for a person: its stream and subject.
func (mb *Mailbox) Path(name string) string {
	return StreamName(mb.team) + " " + inboxFilter(mb.team, name)
}

// Mark returns name's mark, what tells it changed without reading it: the
// stream sequence of its last message and its read position (as
// Position). Two requests, whatever the inbox's length.
func (mb *Mailbox) Mark(ctx context.Context, name string) (inbox.Mark, error) {
	if err := inbox.ValidateName(name); err != nil {
		return inbox.Mark{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var m inbox.Mark
	subjects := []string{inboxFilter(mb.team, name)}
	if mb.hasUnnamed(name) {
		subjects = append(subjects, Subject(mb.team, name))
	}
	for _, subj := range subjects {
		raw, err := mb.stream.GetLastMsgForSubject(ctx, subj)
		switch {
		case errors.Is(err, jetstream.ErrMsgNotFound):
		case err != nil:
			return inbox.Mark{}, fmt.Errorf("inbox %s: %w", name, err)
		default:
			m.Seq = max(m.Seq, raw.Sequence)
		}
	}
	info, err := mb.floor(ctx, name)
	if err != nil {
		return inbox.Mark{}, err
	}
	m.Position = int64(info.AckFloor.Stream)
	return m, nil
}
