package natsstore_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// A stream made before senders were named in subjects is taken over: its
// subjects are added to, and the messages stored on an inbox's old
// subject are read beside the new ones, in order, and committed with them.
func TestAnInboxOfBeforeSendersWereNamedIsReadOn(t *testing.T) {
	url := startServer(t)
	nc := connect(t, url, natsconn.ConnectOptions{})
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: natsstore.StreamName("old"),
		Subjects: []string{"agentteam.old.inbox.*", "agentteam.old.sender.*"}, AllowDirect: true}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"one", "two"} {
		line, _ := json.Marshal(inbox.Message{ID: "old-" + c, Type: inbox.TypeMessage, From: "user", To: "alice", Content: c})
		if _, err := js.Publish(ctx, natsstore.Subject("old", "alice"), line); err != nil {
			t.Fatal(err)
		}
	}
	mb, err := natsstore.OpenMailbox(ctx, nc, "old")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mb.Append(ctx, "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "three"}); err != nil {
		t.Fatal(err)
	}
	mb, err = natsstore.OpenMailbox(ctx, nc, "old")
	if err != nil {
		t.Fatal(err)
	}
	b, err := mb.ReadUnread(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range b.Messages {
		got = append(got, m.From+":"+m.Content)
	}
	if strings.Join(got, " ") != "user:one user:two bob:three" || len(b.Bad) != 0 {
		t.Fatalf("alice's unread: %q, bad %+v", got, b.Bad)
	}
	if err := mb.Commit(ctx, "alice", b); err != nil {
		t.Fatal(err)
	}
	if has, err := mb.HasUnread(ctx, "alice"); err != nil || has {
		t.Fatalf("after the commit HasUnread = %v, %v", has, err)
	}
	if names, err := mb.Names(ctx); err != nil || strings.Join(names, " ") != "alice" {
		t.Fatalf("Names = %v, %v", names, err)
	}
	if m, err := mb.Mark(ctx, "alice"); err != nil || m.Seq != 3 || m.Position != 3 {
		t.Fatalf("Mark = %+v, %v", m, err)
	}
}
