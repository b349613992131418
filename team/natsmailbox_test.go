package team

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/team/registry"
)

var _ Mailbox = (*natsstore.Mailbox)(nil)

// TestTeamRunsOnAJetStreamMailbox: with the inboxes in JetStream
// (Options.Mailbox), a lead spawns three teammates whose reports reach it
// through the stream, each once; no inbox file is written.
func TestTeamRunsOnAJetStreamMailbox(t *testing.T) {
	srvNATS, err := natsserver.StartLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srvNATS.Shutdown(); srvNATS.WaitForShutdown() }()
	nc, err := nats.Connect(srvNATS.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	mb, err := natsstore.OpenMailbox(context.Background(), nc, "demo")
	if err != nil {
		t.Fatal(err)
	}

	var spawns []fakellm.ToolCall
	for i := range 3 {
		spawns = append(spawns, fakellm.ToolCall{Name: "spawn_teammate",
			Args: fmt.Sprintf(`{"name":"w%d","role":"worker","prompt":"do part %d"}`, i, i)})
	}
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: spawns}, {Content: "spawned three"}},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" {
			return fakellm.Reply{Content: "reports received"}
		}
		return fakellm.Reply{Content: c.Agent + " finished"}
	})
	srv := fakellm.New(script)
	defer srv.Close()
	tm := newTestTeam(t, srv, Options{MaxWorkers: 3, Mailbox: mb})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := tm.Run(ctx, "split the work in three"); err != nil {
		t.Fatal(err)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
	reports, bad, err := mb.ReadAll(ctx, "lead")
	if err != nil || len(bad) != 0 {
		t.Fatalf("read the lead's inbox in the stream: %v, %d bad", err, len(bad))
	}
	got := map[string]int{}
	for _, m := range reports {
		got[m.From]++
		if !strings.Contains(m.Content, m.From+" finished") {
			t.Errorf("report from %s reads %q", m.From, m.Content)
		}
	}
	for i := range 3 {
		if n := got[fmt.Sprintf("w%d", i)]; n != 1 {
			t.Errorf("w%d reported %d times in the stream, want once", i, n)
		}
	}
	if has, err := mb.HasUnread(ctx, "lead"); err != nil || has {
		t.Errorf("the lead's inbox still has unread messages: %v, %v", has, err)
	}
	cfg, _ := tm.Registry().Read(t.Context())
	for _, m := range cfg.Teammates {
		if m.Status != registry.StatusShutdown {
			t.Errorf("%s: status %s, want shutdown", m.Name, m.Status)
		}
	}
	if entries, _ := os.ReadDir(tm.Workspace().InboxDir()); len(entries) != 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("inbox files written beside the stream: %v", names)
	}
}
