package natsstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// directBatch is the most messages one batched direct get asks for.
const directBatch = 256

// batchGets reads a stream's messages of one subject many at a time: a
// direct get with a batch is one request answered by up to n messages and
// an end-of-batch note, where GetMsg is a request per message and one
// more that finds nothing (six requests per message read and committed,
// BENCHMARKS.md "Stores"). Only a stream that allows direct gets (one
// copy) answers it. The replies of every request come to one subscription
// made at the first, which lives as long as the connection.
type batchGets struct {
	nc     *nats.Conn
	api    string // $JS.API.DIRECT.GET.<stream>
	once   sync.Once
	prefix string // the subscription's subjects, one token more per request
	err    error  // the subscription could not be made

	mu      sync.Mutex
	next    uint64
	waiting map[string]chan *nats.Msg
}

func newBatchGets(nc *nats.Conn, stream string) *batchGets {
	return &batchGets{nc: nc, api: "$JS.API.DIRECT.GET." + stream, waiting: map[string]chan *nats.Msg{}}
}

// start subscribes to the replies, once.
func (g *batchGets) start() error {
	g.once.Do(func() {
		g.prefix = g.nc.NewInbox() + "."
		_, g.err = g.nc.Subscribe(g.prefix+"*", func(m *nats.Msg) {
			g.mu.Lock()
			ch := g.waiting[strings.TrimPrefix(m.Subject, g.prefix)]
			g.mu.Unlock()
			if ch != nil {
				// Never blocks: a request's channel holds all its replies.
				select {
				case ch <- m:
				default:
				}
			}
		})
	})
	return g.err
}

// directReq is a batched direct get: up to Batch messages of NextFor from Seq on.
type directReq struct {
	Seq     uint64 `json:"seq"`
	NextFor string `json:"next_by_subj"`
	Batch   int    `json:"batch"`
}

// get returns up to n messages of subj from stream sequence seq on, in
// order, and whether the stream holds more after them. A stream that does
// not answer direct gets is nats.ErrNoResponders.
func (g *batchGets) get(ctx context.Context, subj string, seq uint64, n int) (msgs []*jetstream.RawStreamMsg, more bool, err error) {
	if err := g.start(); err != nil {
		return nil, false, err
	}
	body, err := json.Marshal(directReq{Seq: seq, NextFor: subj, Batch: n})
	if err != nil {
		return nil, false, err
	}
	ch := make(chan *nats.Msg, n+2)
	g.mu.Lock()
	g.next++
	token := strconv.FormatUint(g.next, 10)
	g.waiting[token] = ch
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.waiting, token)
		g.mu.Unlock()
	}()
	if err := g.nc.PublishRequest(g.api, g.prefix+token, body); err != nil {
		return nil, false, err
	}
	for {
		var m *nats.Msg
		select {
		case m = <-ch:
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
		switch status := m.Header.Get("Status"); status {
		case "":
			s, err := strconv.ParseUint(m.Header.Get(jetstream.SequenceHeader), 10, 64)
			if err != nil {
				return nil, false, fmt.Errorf("a direct get's message has no sequence: %w", err)
			}
			ts, _ := time.Parse(time.RFC3339Nano, m.Header.Get(jetstream.TimeStampHeaer))
			msgs = append(msgs, &jetstream.RawStreamMsg{Subject: m.Header.Get(jetstream.SubjectHeader), Sequence: s, Data: m.Data, Time: ts})
		case "204": // the end of the batch
			pending, _ := strconv.ParseUint(m.Header.Get("Nats-Num-Pending"), 10, 64)
			return msgs, pending > 0, nil
		case "404": // nothing from seq on
			return msgs, false, nil
		case "503":
			return nil, false, nats.ErrNoResponders
		default:
			return nil, false, fmt.Errorf("direct get: the server answered %s %s", status, m.Header.Get("Description"))
		}
	}
}
