package natsstore_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// startDefaultServer runs a NATS server with NATS's own limits (max_payload
// 1 MiB), as a team's store run by someone else is, not `agentteam serve`.
func startDefaultServer(t *testing.T) string {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true,
		StoreDir: t.TempDir(), NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() { s.Shutdown(); s.WaitForShutdown() })
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	return s.ClientURL()
}

// worstContent is the most content the files store takes whose inbox line
// is longest: every byte a control character, escaped to six.
var worstContent = strings.Repeat("\x1b", inbox.MaxContentBytes)

// A message the files store takes but whose JSON is over a NATS server's
// max_payload is refused with a sentence that says so and what to do, as
// inbox.ErrTooLarge (not the client's bare "nats: maximum payload
// exceeded"), by Append and by a claimed sender's AppendAs; nothing is
// stored and the inbox goes on.
func TestAMessageOverTheServersMaxPayloadIsRefusedWithASentence(t *testing.T) {
	mb := opener(startDefaultServer(t), "big")(t).(*natsstore.Mailbox)
	claim, err := mb.ClaimSender(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	appends := map[string]func(inbox.Message) (inbox.Message, error){
		"Append":   func(m inbox.Message) (inbox.Message, error) { return mb.Append(t.Context(), "alice", m) },
		"AppendAs": func(m inbox.Message) (inbox.Message, error) { return mb.AppendAs(t.Context(), "alice", m, claim) },
	}
	for name, appendFn := range appends {
		_, err := appendFn(inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: worstContent})
		if !errors.Is(err, inbox.ErrTooLarge) {
			t.Fatalf("%s of a %d-byte message whose JSON is 1.5 MiB: err = %v, want inbox.ErrTooLarge", name, len(worstContent), err)
		}
		msg := err.Error()
		if !strings.Contains(msg, "max_payload") || !strings.Contains(msg, "put large content in a file") || len(msg) > 300 {
			t.Errorf("%s: the sentence is %q", name, msg)
		}
	}
	if _, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "small"}); err != nil {
		t.Fatal(err)
	}
	all, bad, err := mb.ReadAll(t.Context(), "alice")
	if err != nil || len(bad) != 0 || len(all) != 1 || all[0].Content != "small" {
		t.Fatalf("the inbox holds %d messages, bad %v, err %v; want the small one alone", len(all), bad, err)
	}
}

// `agentteam serve` takes every message the files store takes: the longest
// inbox line (256 KiB of control characters, escaped to 1.5 MiB) is stored
// and read back whole.
func TestServeTakesTheFilesStoresLongestMessage(t *testing.T) {
	mb := opener(startServer(t), "big")(t)
	sent, err := mb.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: worstContent})
	if err != nil {
		t.Fatalf("append the files store's longest line: %v", err)
	}
	b, err := mb.ReadUnread(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Messages) != 1 || b.Messages[0].ID != sent.ID || b.Messages[0].Content != worstContent {
		t.Fatalf("read %d messages (bad %v), want the one sent whole", len(b.Messages), b.Bad)
	}
}
