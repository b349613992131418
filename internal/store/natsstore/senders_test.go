package natsstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// A sender's messages carry its claim: once another writer (a respawn, on
// another connection as on another host) claims the sender, a message of
// the earlier claim is refused with a FencedError and is not in the inbox,
// while the new claim's and other senders' messages are delivered. An
// inbox opened by an earlier version (its stream without the senders'
// subjects) takes claims once reopened.
func TestAMessageOfASenderClaimedElsewhereIsRefused(t *testing.T) {
	url := startServer(t)
	ctx := context.Background()
	js, err := jetstream.New(connect(t, url, natsconn.ConnectOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: natsstore.StreamName("sc"), Subjects: []string{"agentteam.sc.inbox.*"}}); err != nil {
		t.Fatal(err)
	}
	old, err := natsstore.OpenMailbox(ctx, connect(t, url, natsconn.ConnectOptions{}), "sc")
	if err != nil {
		t.Fatal(err)
	}
	first, err := old.ClaimSender(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := old.AppendAs(ctx, "bob", inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: "before the takeover"}, first); err != nil {
		t.Fatalf("a message of the one claim: %v", err)
	}
	respawn, err := natsstore.OpenMailbox(ctx, connect(t, url, natsconn.ConnectOptions{}), "sc")
	if err != nil {
		t.Fatal(err)
	}
	second, err := respawn.ClaimSender(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	_, err = old.AppendAs(ctx, "bob", inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: "after the takeover"}, first)
	var fenced *natsstore.FencedError
	if !errors.As(err, &fenced) || fenced.Agent != "alice" {
		t.Fatalf("a message of the earlier claim after the takeover: %v, want a FencedError for alice", err)
	}
	if _, err := respawn.AppendAs(ctx, "bob", inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: "from the respawn"}, second); err != nil {
		t.Fatalf("a message of the new claim: %v", err)
	}
	if _, err := old.Append(ctx, "bob", inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "from the lead"}); err != nil {
		t.Fatal(err)
	}
	msgs, bad, err := respawn.ReadAll(ctx, "bob")
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Content)
	}
	if fmt.Sprint(got) != "[before the takeover from the respawn from the lead]" {
		t.Fatalf("bob's inbox: %q", got)
	}
	if names, err := respawn.Names(ctx); err != nil || fmt.Sprint(names) != "[bob]" {
		t.Fatalf("the inboxes: %v, %v (a claim is no inbox)", names, err)
	}
}

// On a 3-node cluster the server checks one message of a sender at a
// time and refuses the others in flight meanwhile ("wrong last
// sequence", no number): a teammate's messages sent at once, under one
// claim, are each delivered once all the same.
func TestClusterDeliversASendersConcurrentMessages(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	mb, err := natsstore.OpenMailbox(ctx, connect(t, c.urls, natsconn.ConnectOptions{}), "scc", natsstore.Replicas(3))
	if err != nil {
		t.Fatal(err)
	}
	claim, err := mb.ClaimSender(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			if _, err := mb.AppendAs(ctx, fmt.Sprintf("b%d", i%4), inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: fmt.Sprint(i)}, claim); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("a message under the one claim: %v", err)
	}
	total := 0
	for i := range 4 {
		msgs, _, err := mb.ReadAll(ctx, fmt.Sprintf("b%d", i))
		if err != nil {
			t.Fatal(err)
		}
		total += len(msgs)
	}
	if total != n {
		t.Fatalf("%d messages delivered, want %d", total, n)
	}
}
