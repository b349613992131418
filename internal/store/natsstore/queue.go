package natsstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/store/natsconn"
)

// queueAckWait is how long a spawn request taken by a worker that never
// answered for it (its process died) stays held before another may take it.
const queueAckWait = 30 * time.Second

// queueFetchWait bounds one pull request of Next: a pull the server lost
// (a node gone) is asked again after this long.
const queueFetchWait = 2 * time.Second

// minFetchWait is the least time left for which Next still sends a pull
// request; with less, it waits for its context to end.
const minFetchWait = 20 * time.Millisecond

// QueueStreamName is the name of team's work queue of spawn requests.
func QueueStreamName(team string) string { return "agentteam_" + team + "_spawn" }

// QueueSubject is the subject spawn requests of team are published on.
func QueueSubject(team string) string { return "agentteam." + team + ".spawn" }

// queueConsumer is the one durable pull consumer every worker of a team
// shares: a request goes to one worker at a time.
const queueConsumer = "workers"

// Queue is a team's work queue: a stream with WorkQueuePolicy
// whose one durable pull consumer all workers share, so each request is
// taken by one worker; a request acknowledged is gone, one given back
// (Nak) or never answered for is offered again. Each request is published
// with a Nats-Msg-Id, so a request sent again is stored once. It is safe
// for concurrent use; any number of Queues (in any number of processes)
// may share a team.
type Queue struct {
	js   jetstream.JetStream
	cons jetstream.Consumer
	subj string
	team string
}

// OpenQueue opens team's work queue on nc, creating its stream and its
// consumer if they are not there. Replicas(n) is as for OpenMailbox. nc
// stays the caller's to close.
func OpenQueue(ctx context.Context, nc *nats.Conn, team string, opts ...MailboxOption) (*Queue, error) {
	if err := checkTeam(team); err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("open the work queue of %s: %w", team, err)
	}
	cfg := jetstream.StreamConfig{
		Name:        QueueStreamName(team),
		Subjects:    []string{QueueSubject(team)},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.WorkQueuePolicy,
		Duplicates:  2 * time.Minute,
		AllowDirect: true,
	}
	opts, existing, err := keepReplicas(ctx, js, cfg.Name, opts)
	if err != nil {
		return nil, fmt.Errorf("open the work queue of %s: %w", team, err)
	}
	for _, o := range opts {
		o(&cfg)
	}
	st, err := openStream(ctx, js, cfg, existing)
	if err != nil {
		return nil, fmt.Errorf("open the work queue of %s: stream: %w", team, replicaSentence(cfg.Replicas, err))
	}
	cons, err := retried(ctx, func(ctx context.Context) (jetstream.Consumer, error) {
		if c, err := st.Consumer(ctx, queueConsumer); err == nil {
			return c, nil
		}
		return st.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{
			Durable:       queueConsumer,
			AckPolicy:     jetstream.AckExplicitPolicy,
			AckWait:       queueAckWait,
			MaxDeliver:    -1, // the team bounds how long a request may wait for a worker
			MaxAckPending: -1,
		})
	})
	if err != nil {
		return nil, fmt.Errorf("open the work queue of %s: consumer: %w", team, err)
	}
	return &Queue{js: js, cons: cons, subj: QueueSubject(team), team: team}, nil
}

// Publish stores one request, data, under id (its Nats-Msg-Id: the same
// id published again within two minutes is one request), and returns
// once the server has it.
func (q *Queue) Publish(ctx context.Context, id string, data []byte) error {
	if id == "" {
		return errors.New("work queue: a request needs an id")
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	ctx, stop := natsconn.WatchRefusal(ctx, q.js.Conn(), q.subj)
	defer stop()
	if err := publishOnce(ctx, q.js, q.subj, data, id); err != nil {
		if cause := natsconn.RefusedCause(ctx, err); cause != err {
			err = fmt.Errorf("only the lead's credentials may queue a spawn (%w)", cause)
		}
		return fmt.Errorf("work queue of %s: %w", q.team, err)
	}
	return nil
}

// Job is one request taken from the queue; its taker acknowledges it
// (done), gives it back for another (Nak), or drops it (Term).
type Job struct {
	msg jetstream.Msg
}

// Next waits for a request and takes it; it returns ctx's error once ctx ends.
func (q *Queue) Next(ctx context.Context) (*Job, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if d, ok := ctx.Deadline(); ok && time.Until(d) < minFetchWait {
			// Too little time for a pull request the server would honour.
			<-ctx.Done()
			return nil, ctx.Err()
		}
		try, cancel := context.WithTimeout(ctx, queueFetchWait)
		batch, err := q.cons.Fetch(1, jetstream.FetchContext(try))
		if err != nil {
			cancel()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if unanswered(err) {
				continue
			}
			return nil, fmt.Errorf("work queue of %s: %w", q.team, err)
		}
		var job *Job
		for m := range batch.Messages() {
			job = &Job{msg: m}
		}
		cancel()
		if job != nil {
			return job, nil
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.Canceled) && !unanswered(err) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("work queue of %s: %w", q.team, err)
		}
	}
}

// Data is the request as published.
func (j *Job) Data() []byte { return j.msg.Data() }

// Delivered is how many times the request has been handed to a worker,
// this time included.
func (j *Job) Delivered() int {
	md, err := j.msg.Metadata()
	if err != nil {
		return 1
	}
	return int(md.NumDelivered)
}

// Ack removes the request from the queue, once the server confirms it.
func (j *Job) Ack(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	return j.msg.DoubleAck(ctx)
}

// Nak gives the request back, to be offered again after delay.
func (j *Job) Nak(delay time.Duration) error { return j.msg.NakWithDelay(delay) }

// Term drops the request: nobody is offered it again.
func (j *Job) Term() error { return j.msg.Term() }
