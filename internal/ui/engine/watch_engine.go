package engine

import (
	"context"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
)

// WatchStores are what a watching chat reads and writes of a team another
// process runs, as the person: the inboxes, the registry, the board, and
// how a message is sent and an ask answered (as agentteam send and
// approve do).
type WatchStores struct {
	Mail     Inboxes
	Registry *registry.Registry
	Board    *board.Board
	// Send puts the person's message in to's inbox.
	Send func(ctx context.Context, to, content string) error
	// Answer allows or denies a permission ask; always also adds its rule.
	Answer func(ctx context.Context, id string, approve, always bool, reason string) (string, error)
	// Runner names the process that runs the team, for refusals.
	Runner string
}

// watchEngine is the Engine of a watching chat: messages and answers go
// through the stores, what needs the running team is refused.
type watchEngine struct{ s WatchStores }

// NewWatchEngine is the Engine of a chat that watches a team another
// process runs.
func NewWatchEngine(s WatchStores) Engine { return &watchEngine{s: s} }

// refuse is the sentence for what only the process that runs the team does.
func (e *watchEngine) refuse(what string) error {
	return fmt.Errorf("%s runs this team and this chat only watches it: %s is done there, or ask the lead", e.s.Runner, what)
}

func (e *watchEngine) Say(text string) error {
	return e.s.Send(context.Background(), inbox.LeadName, text) // Say is given no context
}

func (e *watchEngine) Send(ctx context.Context, to, content string) error {
	if err := team.CheckRecipient(ctx, e.s.Registry, to); err != nil {
		return err
	}
	return e.s.Send(ctx, to, content)
}

func (e *watchEngine) Broadcast(ctx context.Context, content string) ([]string, error) {
	c, err := e.s.Registry.Read(ctx)
	if err != nil {
		return nil, err
	}
	var to []string
	for _, m := range c.Teammates {
		if m.Status == registry.StatusShutdown || m.Status == registry.StatusFailed {
			continue
		}
		if err := e.s.Send(ctx, m.Name, content); err != nil {
			return to, err
		}
		to = append(to, m.Name)
	}
	return to, nil
}

func (e *watchEngine) Spawn(context.Context, tools.SpawnSpec) error {
	return e.refuse("spawning a teammate")
}

func (e *watchEngine) ReviewPlan(context.Context, string, bool, string) (string, error) {
	return "", e.refuse("reviewing a plan")
}

func (e *watchEngine) Shutdown(context.Context, string, string) (string, error) {
	return "", e.refuse("shutting a teammate down")
}

func (e *watchEngine) Tasks(ctx context.Context) (string, error) {
	if e.s.Board == nil {
		return "", fmt.Errorf("this team's task board cannot be read here")
	}
	tasks, err := e.s.Board.List(ctx)
	if err != nil {
		return "", err
	}
	if len(tasks) == 0 {
		return "the task board is empty: agents add tasks with task_create", nil
	}
	var b strings.Builder
	if err := board.FormatTasks(&b, tasks); err != nil {
		return "", err
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

func (e *watchEngine) Merge(context.Context, string) (string, error) {
	return "", e.refuse("merging a teammate's branch")
}

func (e *watchEngine) Diff(_ context.Context, name string) (string, error) {
	return "", fmt.Errorf("this chat only watches the team: agentteam diff %s shows %s's branch", name, name)
}

func (e *watchEngine) SetAuto(bool)    {}
func (e *watchEngine) Interrupt() bool { return false }

func (e *watchEngine) Conversation(string) ([]openai.ChatCompletionMessage, bool) { return nil, false }

func (e *watchEngine) Describe(ctx context.Context) (string, error) {
	c, err := e.s.Registry.Read(ctx)
	if err != nil {
		return "", err
	}
	return team.DescribeTeam(ctx, c, e.s.Mail.Stats), nil
}

func (e *watchEngine) Inbox(ctx context.Context, name string) (string, error) {
	return InboxText(ctx, e.s.Mail, name)
}

func (e *watchEngine) AnswerPermission(ctx context.Context, id string, approve, always bool, reason string) (string, error) {
	return e.s.Answer(ctx, id, approve, always, reason)
}

func (e *watchEngine) AllowForSession(context.Context, string) (string, error) {
	return "", e.refuse("allowing a prefix for the session")
}

func (e *watchEngine) Compact() (string, error) {
	return "", e.refuse("compacting the lead's conversation")
}

func (e *watchEngine) Usage() registry.TeamUsage { return registry.TeamUsage{} }

func (e *watchEngine) SetLeadModel(string) (string, error) {
	return "", e.refuse("switching the lead's model")
}

func (e *watchEngine) Models() (models.Catalog, string) { return models.Catalog{}, "" }

func (e *watchEngine) AnswerBudget(bool) (string, error) {
	return "", e.refuse("answering the budget question")
}
