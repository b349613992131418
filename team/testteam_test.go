package team

import (
	"context"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/workspace"
)

// newTestTeam opens a team against a fake model server: a fresh workspace,
// a streaming client with fast retries and a short wake poll unless opts
// sets them. The team is closed when the test ends.
func newTestTeam(t *testing.T, srv *fakellm.Server, opts Options) *Team {
	t.Helper()
	if opts.Workspace == nil {
		ws, err := workspace.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		opts.Workspace = ws
	}
	if opts.Model == nil {
		opts.Model = llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "fake", Stream: true,
			BaseDelay: 5 * time.Millisecond, MaxDelay: 20 * time.Millisecond})
	}
	if opts.PollInterval == 0 {
		opts.PollInterval = 50 * time.Millisecond
	}
	tm, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tm.Close(context.Background()) })
	return tm
}
