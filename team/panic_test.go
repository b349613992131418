package team

import (
	"context"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// panickyModel answers the lead and panics for everyone else: a bug in
// a teammate's path.
type panickyModel struct{}

func (panickyModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	if req.Agent != inbox.LeadName {
		panic("boom in " + req.Agent)
	}
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: "ok"}
	return llm.Response{Message: msg}, nil
}

func TestAPanickingTeammateFailsAloneAndTheLeadIsTold(t *testing.T) {
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tm, err := Open(context.Background(), Options{Workspace: ws, Model: panickyModel{}, PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer tm.Close(context.Background())
	if err := tm.Spawn(context.Background(), inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "programmer", Prompt: "work"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := tm.Run(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	if m := memberOf(t, tm, "alice"); m.Status != registry.StatusFailed || !strings.Contains(m.Error, "boom in alice") {
		t.Fatalf("alice %+v: want failed with the panic's reason", m)
	}
	msgs, _, _ := tm.Mailbox().ReadAll(ctx, "lead")
	if len(msgs) != 1 || msgs[0].Type != "error" || !strings.Contains(msgs[0].Content, "internal error") {
		t.Fatalf("lead inbox %+v", msgs)
	}
}
