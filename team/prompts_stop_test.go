package team

import (
	"context"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// TestLeadPromptAsksForShortProgress: the lead's model reads, in the
// system prompt of the team's first request, to answer each wake of
// reports with a line per reporter, not a re-summary of earlier reports.
func TestLeadPromptAsksForShortProgress(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	tm := newTestTeam(t, srv, Options{})
	if _, err := tm.Run(context.Background(), "say hi"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests("lead")
	if len(reqs) == 0 || len(reqs[0].Messages) == 0 || reqs[0].Messages[0].Role != openai.ChatMessageRoleSystem {
		t.Fatalf("the lead's first request has no system prompt: %+v", reqs)
	}
	system := reqs[0].Messages[0].Content
	for _, want := range []string{"a line per teammate that reported", "without restating earlier reports"} {
		if !strings.Contains(system, want) {
			t.Errorf("the lead's system prompt lacks %q:\n%s", want, system)
		}
	}
}
