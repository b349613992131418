package natsstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// A document's compare-and-set on a server without copies whose answer is
// lost was sent once (kv.Update) and failed with the deadline though it
// was stored; it is now sent again with its id and succeeds, stored once.
func TestDocWriteWhoseAnswerIsLostSucceedsOnce(t *testing.T) {
	url := startServer(t)
	const team = "lostdoc"
	p := startAnswerDropper(t, url[len("nats://"):], "HPUB $KV."+natsstore.BucketName(team)+".board", nil)
	nc, err := nats.Connect(p.url(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d, err := natsstore.OpenDoc[[]int](ctx, nc, team, "board")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Update(t.Context(), func(v *[]int) error { *v = append(*v, 1); return nil }); err != nil {
		t.Fatalf("a write whose answer was lost: %v", err)
	}
	if !p.droppedOnce() {
		t.Fatal("the write's answer was not dropped: the test proves nothing")
	}
	other, err := natsstore.OpenDoc[[]int](ctx, connect(t, url, natsconn.ConnectOptions{}), team, "board")
	if err != nil {
		t.Fatal(err)
	}
	v, err := other.Read(t.Context())
	if err != nil || len(v) != 1 || v[0] != 1 {
		t.Fatalf("the document is %v (%v), want [1]", v, err)
	}
}
