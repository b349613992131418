package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/store/storetest"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// startServer starts an embedded NATS server with JetStream on 127.0.0.1,
// a random port and a temporary directory, stopped when t ends.
func startServer(t testing.TB) string {
	t.Helper()
	s, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	return s.ClientURL()
}

// opener opens a new connection and Mailbox on url for team each call, as
// another process would.
func opener(url, team string) storetest.MailboxOpener {
	return func(t *testing.T) storetest.Mailbox {
		t.Helper()
		nc, err := nats.Connect(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		mb, err := natsstore.OpenMailbox(context.Background(), nc, team)
		if err != nil {
			t.Fatal(err)
		}
		return mb
	}
}

func TestJetStreamKeepsTheMailboxContract(t *testing.T) {
	storetest.RunMailbox(t, opener(startServer(t), "t1"))
}

// A message published again with the same id (a retry after a lost reply)
// is stored once: Nats-Msg-Id deduplicates it.
func TestAppendWithTheSameIDIsStoredOnce(t *testing.T) {
	mb := opener(startServer(t), "t2")(t)
	first, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mb.Append(t.Context(), "alice", first); err != nil {
		t.Fatal(err)
	}
	b, err := mb.ReadUnread(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Messages) != 1 || b.Messages[0].ID != first.ID || b.Messages[0].Content != "hi" {
		t.Fatalf("read %+v, want the message once", b.Messages)
	}
}

// Names that are no single subject token (a wildcard, a dot that would
// reach another inbox) are refused with one clear error.
func TestHostileNamesAreRefused(t *testing.T) {
	url := startServer(t)
	mb := opener(url, "t3")(t)
	for _, name := range []string{"", "a.b", "*", ">", "a b", "../x"} {
		if _, err := mb.Append(t.Context(), name, inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "x"}); !errors.Is(err, inbox.ErrInvalid) {
			t.Errorf("append to %q: err = %v, want ErrInvalid", name, err)
		}
		if _, err := mb.ReadUnread(t.Context(), name); !errors.Is(err, inbox.ErrInvalid) {
			t.Errorf("read %q: err = %v, want ErrInvalid", name, err)
		}
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := natsstore.OpenMailbox(context.Background(), nc, "a.>"); !errors.Is(err, inbox.ErrInvalid) {
		t.Errorf("open team %q: err = %v, want ErrInvalid", "a.>", err)
	}
}

// A line stored by something else that is not a message is reported as a
// bad line, as the file store reports one, and committing it moves on.
func TestAForeignLineIsReportedBad(t *testing.T) {
	url := startServer(t)
	mb := opener(url, "t4")(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(context.Background(), natsstore.SentSubject("t4", "alice", "bob"), []byte("not json")); err != nil {
		t.Fatal(err)
	}
	good, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := mb.ReadUnread(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Bad) != 1 || len(b.Messages) != 1 || b.Messages[0].ID != good.ID {
		t.Fatalf("read %d messages and bad lines %+v, want the good one and one bad", len(b.Messages), b.Bad)
	}
	if err := mb.Commit(t.Context(), "alice", b); err != nil {
		t.Fatal(err)
	}
	if has, err := mb.HasUnread(t.Context(), "alice"); err != nil || has {
		t.Fatalf("after commit HasUnread = %v, %v", has, err)
	}
}

// ReadAll and Stats see the whole inbox, read or not, and bad lines apart.
func TestReadAllAndStatsCountTheWholeInbox(t *testing.T) {
	mb := opener(startServer(t), "t5")(t).(*natsstore.Mailbox)
	for _, c := range []string{"one", "two", "three"} {
		if _, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := mb.ReadUnread(t.Context(), "alice")
	if err != nil || len(b.Messages) != 3 {
		t.Fatalf("read %d, %v", len(b.Messages), err)
	}
	if err := mb.Commit(t.Context(), "alice", b); err != nil {
		t.Fatal(err)
	}
	all, bad, err := mb.ReadAll(t.Context(), "alice")
	if err != nil || len(all) != 3 || len(bad) != 0 || all[2].Content != "three" {
		t.Fatalf("ReadAll = %d messages, %d bad, %v", len(all), len(bad), err)
	}
	st, err := mb.Stats(t.Context(), "alice")
	if err != nil || st.Total != 3 || st.Unread != 0 || st.Bad != 0 {
		t.Fatalf("Stats = %+v, %v; want 3 in all, none unread", st, err)
	}
	if _, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "four"}); err != nil {
		t.Fatal(err)
	}
	if st, err := mb.Stats(t.Context(), "alice"); err != nil || st.Total != 4 || st.Unread != 1 {
		t.Fatalf("Stats after one more = %+v, %v; want 4 in all, 1 unread", st, err)
	}
}

// A commit that died after the consumer delivered it messages but before
// it acknowledged holds them until the ack wait passes: a commit of the
// same batch elsewhere then says so, and the messages stay unread (read
// again later, never lost), instead of claiming a position it did not reach.
func TestCommitHeldByADeadCommitSaysSo(t *testing.T) {
	url := startServer(t)
	mb := opener(url, "t7")(t)
	for _, c := range []string{"one", "two"} {
		if _, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := mb.ReadUnread(t.Context(), "alice")
	if err != nil || len(b.Messages) != 2 {
		t.Fatalf("read %d, %v", len(b.Messages), err)
	}
	// The dead commit: the durable consumer delivers both, nobody acks.
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	c, err := js.Consumer(context.Background(), natsstore.StreamName("t7"), "inbox_alice")
	if err != nil {
		t.Fatal(err)
	}
	held, err := c.FetchNoWait(10)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for range held.Messages() {
		n++
	}
	if n != 2 {
		t.Fatalf("the dead commit was delivered %d messages, want 2", n)
	}
	err = opener(url, "t7")(t).Commit(t.Context(), "alice", b)
	if err == nil || !strings.Contains(err.Error(), "unfinished commit") {
		t.Fatalf("commit of held messages: err = %v, want one naming the unfinished commit", err)
	}
	if has, err := mb.HasUnread(t.Context(), "alice"); err != nil || !has {
		t.Fatalf("after the refused commit HasUnread = %v, %v; want true", has, err)
	}
	again, err := mb.ReadUnread(t.Context(), "alice")
	if err != nil || len(again.Messages) != 2 {
		t.Fatalf("after the refused commit read %d, %v; want both again", len(again.Messages), err)
	}
}

func BenchmarkJetStreamWatch(b *testing.B) {
	url := startServer(b)
	storetest.BenchmarkWatch(b, func(b *testing.B) storetest.Mailbox {
		nc, err := nats.Connect(url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(nc.Close)
		mb, err := natsstore.OpenMailbox(context.Background(), nc, "bench")
		if err != nil {
			b.Fatal(err)
		}
		return mb
	})
}

// Names lists the inboxes that hold a message, of this team only, sorted.
func TestNamesListsTheTeamsInboxes(t *testing.T) {
	url := startServer(t)
	mine, other := opener(url, "t9")(t), opener(url, "t10")(t)
	for _, to := range []string{"zed", "alice", "alice"} {
		if _, err := mine.Append(t.Context(), to, inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Append(t.Context(), "bob", inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	names, err := mine.(*natsstore.Mailbox).Names(t.Context())
	if err != nil || strings.Join(names, ",") != "alice,zed" {
		t.Fatalf("Names = %v, %v; want alice,zed", names, err)
	}
}

// A Commit right after the read it commits, with nothing else reading,
// always succeeds: the consumer may not yet know of the message the stream
// already stored (storebench saw 1 to 3 in 1,000 fail as "held by an
// unfinished commit elsewhere", so a teammate was marked failed).
func TestACommitRightAfterItsReadSucceeds(t *testing.T) {
	testkit.SkipShort(t)
	url := startServer(t)
	w, r := opener(url, "tc")(t), opener(url, "tc")(t)
	for i := range 2000 {
		if _, err := w.Append(t.Context(), "c", inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "m"}); err != nil {
			t.Fatal(err)
		}
		b, err := r.ReadUnread(t.Context(), "c")
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Messages) != 1 {
			t.Fatalf("round %d: read %d messages, want 1", i, len(b.Messages))
		}
		if err := r.Commit(t.Context(), "c", b); err != nil {
			t.Fatalf("round %d: %v", i, err)
		}
	}
}

// A team may have more than the server's default of 1,000 consumers a
// stream: one per agent.
func TestATeamHoldsMoreThanAThousandInboxes(t *testing.T) {
	testkit.SkipShort(t)
	mb := opener(startServer(t), "big")(t)
	for i := range 1010 {
		if _, err := mb.HasUnread(t.Context(), fmt.Sprintf("a%d", i)); err != nil {
			t.Fatalf("inbox %d: %v", i, err)
		}
	}
}

// Reading an inbox and committing what was read asks the server little:
// another process's first read looks the inbox's consumer up (its info is
// the read position) and gets every message in one batched direct get;
// the commit is a pull and an acknowledgement. It was create, info and a
// get per message plus one finding nothing, then info, pull and ack: 6 +
// the messages' count requests for the first read and commit.
func TestReadAndCommitAskTheServerLittle(t *testing.T) {
	url := startServer(t)
	w := opener(url, "few")(t)
	if _, err := w.HasUnread(t.Context(), "alice"); err != nil { // the consumer, made by another process
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := w.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	r, err := natsstore.OpenMailbox(context.Background(), nc, "few")
	if err != nil {
		t.Fatal(err)
	}
	sent := func() uint64 { return nc.Stats().OutMsgs }
	before := sent()
	b, err := r.ReadUnread(t.Context(), "alice")
	if err != nil || len(b.Messages) != 3 {
		t.Fatalf("read %d, %v", len(b.Messages), err)
	}
	for i, m := range b.Messages {
		if m.Content != fmt.Sprint(i) {
			t.Fatalf("message %d is %q", i, m.Content)
		}
	}
	if n := sent() - before; n > 2 {
		t.Errorf("the first read of 3 messages sent %d requests, want 2 (consumer's info, one batched get)", n)
	}
	// A commit is a pull and an ack; a pull that comes before the consumer
	// has taken note of the messages (rare) asks the position and pulls
	// again, so the count is over rounds: it was 3 each, at least.
	const rounds = 20
	var commits uint64
	for i := range rounds {
		if i > 0 {
			for range 2 {
				if _, err := w.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "m"}); err != nil {
					t.Fatal(err)
				}
			}
			if b, err = r.ReadUnread(t.Context(), "alice"); err != nil || len(b.Messages) != 2 {
				t.Fatalf("round %d: read %d, %v", i, len(b.Messages), err)
			}
		}
		before = sent()
		if err := r.Commit(t.Context(), "alice", b); err != nil {
			t.Fatal(err)
		}
		commits += sent() - before
	}
	if commits > rounds*5/2 {
		t.Errorf("%d commits sent %d requests, want about 2 each (a pull, an acknowledgement)", rounds, commits)
	}
	if has, err := w.HasUnread(t.Context(), "alice"); err != nil || has {
		t.Fatalf("after the commit another process sees unread = %v, %v", has, err)
	}
	// A commit of a batch already at the position is still a no-op.
	if err := r.Commit(t.Context(), "alice", b); err != nil {
		t.Fatalf("the same commit again: %v", err)
	}
}

// A consumer made with other settings (an earlier version, another
// client) is brought to the inbox's own at its first use in a process;
// one with the same settings is used as it is.
func TestAnInboxConsumerWithOtherSettingsIsUpdated(t *testing.T) {
	url := startServer(t)
	mb := opener(url, "cfg")(t)
	if _, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "x"}); err != nil {
		t.Fatal(err)
	}
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateOrUpdateConsumer(ctx, natsstore.StreamName("cfg"), jetstream.ConsumerConfig{
		Durable: "inbox_alice", FilterSubject: natsstore.Subject("cfg", "alice"), AckPolicy: jetstream.AckAllPolicy, AckWait: 5 * time.Second,
	}); err != nil {
		t.Fatal(err)
	}
	b, err := opener(url, "cfg")(t).ReadUnread(ctx, "alice")
	if err != nil || len(b.Messages) != 1 {
		t.Fatalf("read %d, %v", len(b.Messages), err)
	}
	c, err := js.Consumer(ctx, natsstore.StreamName("cfg"), "inbox_alice")
	if err != nil {
		t.Fatal(err)
	}
	if cfg := c.CachedInfo().Config; cfg.AckWait != 30*time.Second || cfg.MaxAckPending != -1 {
		t.Fatalf("the consumer kept AckWait %s, MaxAckPending %d", cfg.AckWait, cfg.MaxAckPending)
	}
}

// A read of more messages than one batched get brings (and a read of all)
// hands every one once, in order.
func TestAReadOfManyMessagesTakesEveryOneInOrder(t *testing.T) {
	url := startServer(t)
	mb := opener(url, "many")(t).(*natsstore.Mailbox)
	const n = 700
	for i := range n {
		if _, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 { // another inbox's messages between
			if _, err := mb.Append(t.Context(), "bob", inbox.Message{Type: inbox.TypeMessage, From: "x", Content: "y"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	b, err := opener(url, "many")(t).ReadUnread(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	all, bad, err := mb.ReadAll(t.Context(), "alice")
	if err != nil || len(bad) > 0 {
		t.Fatal(err, bad)
	}
	for _, got := range [][]inbox.Message{b.Messages, all} {
		if len(got) != n {
			t.Fatalf("read %d messages, want %d", len(got), n)
		}
		for i, m := range got {
			if m.Content != fmt.Sprint(i) || m.From != "bob" {
				t.Fatalf("message %d is %+v", i, m)
			}
		}
	}
}

// apiSpy counts the JetStream API requests whose subject starts with a
// prefix (such as "$JS.API.CONSUMER.INFO.") that cross the server.
type apiSpy struct {
	count chan struct{}
}

// spyMark ends a spy's count; one subscription for both keeps them in order.
const spyMark = "$JS.API.SPY.MARK"

func spyOn(t *testing.T, url, prefix string) *apiSpy {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s := &apiSpy{count: make(chan struct{}, 1<<16)}
	marked := false // the handler runs on one goroutine
	if _, err := nc.Subscribe("$JS.API.>", func(m *nats.Msg) {
		switch {
		case marked:
		case m.Subject == spyMark:
			marked = true
			close(s.count)
		case strings.HasPrefix(m.Subject, prefix):
			s.count <- struct{}{}
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return s
}

// seen is how many requests the spy saw that conn sent before now: a mark
// published on conn comes after them. The spy counts no more after it.
func (s *apiSpy) seen(t *testing.T, conn *nats.Conn) int {
	t.Helper()
	if err := conn.Publish(spyMark, nil); err != nil {
		t.Fatal(err)
	}
	n := 0
	for range s.count {
		n++
	}
	return n
}

// TestHasUnreadOfAReadInboxAsksNoConsumerInfo: once a process has seen an
// inbox's read position, HasUnread with nothing after it is one direct get,
// no consumer info request (a teammate woken for nothing asked one each
// time). It stays exact: a message after the position is unread, and one
// read meanwhile by another process is not.
func TestHasUnreadOfAReadInboxAsksNoConsumerInfo(t *testing.T) {
	url := startServer(t)
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	mb, err := natsstore.OpenMailbox(context.Background(), nc, "quietinfo")
	if err != nil {
		t.Fatal(err)
	}
	other := opener(url, "quietinfo")(t)
	send := func() {
		t.Helper()
		if _, err := mb.Append(t.Context(), "bob", inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	readAll := func(m storetest.Mailbox) {
		t.Helper()
		b, err := m.ReadUnread(t.Context(), "bob")
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Commit(t.Context(), "bob", b); err != nil {
			t.Fatal(err)
		}
	}
	hasUnread := func(want bool) {
		t.Helper()
		has, err := mb.HasUnread(t.Context(), "bob")
		if err != nil {
			t.Fatal(err)
		}
		if has != want {
			t.Fatalf("HasUnread = %v, want %v", has, want)
		}
	}
	send()
	send()
	readAll(mb)
	spy := spyOn(t, url, "$JS.API.CONSUMER.INFO.")
	for range 10 {
		hasUnread(false)
	}
	if n := spy.seen(t, nc); n != 0 {
		t.Fatalf("10 HasUnread of a read inbox asked %d consumer infos, want 0", n)
	}
	send()
	hasUnread(true)
	readAll(other) // another process reads it: this one's position is behind
	hasUnread(false)
	hasUnread(false) // and now knows the new position
}
