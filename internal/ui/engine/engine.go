package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
)

// Engine is what the TUI asks of the team. Every method may do file IO, so
// the model calls them only from jobs run off the Update goroutine.
type Engine interface {
	// Say gives the lead a message from the person.
	Say(text string) error
	Send(ctx context.Context, to, content string) error
	Broadcast(ctx context.Context, content string) ([]string, error)
	Spawn(ctx context.Context, spec tools.SpawnSpec) error
	// ReviewPlan approves or rejects the plan a teammate has waiting.
	ReviewPlan(ctx context.Context, name string, approve bool, feedback string) (string, error)
	// Shutdown asks a teammate to shut down; its answer arrives as a message to the lead.
	Shutdown(ctx context.Context, name, reason string) (string, error)
	// Tasks is the task board as a table.
	Tasks(ctx context.Context) (string, error)
	// Merge merges a teammate's branch into the lead's branch; a conflict
	// is an error and goes to the teammate.
	Merge(ctx context.Context, name string) (string, error)
	// Diff is a teammate's branch against the merge base, as text.
	Diff(ctx context.Context, name string) (string, error)
	SetAuto(on bool)
	// Interrupt ends the lead's turn; it does not block.
	Interrupt() bool
	Conversation(name string) ([]openai.ChatCompletionMessage, bool)
	Describe(ctx context.Context) (string, error)
	// Inbox lists every inbox (name "") or one inbox's messages, as text.
	Inbox(ctx context.Context, name string) (string, error)
	// AnswerPermission allows or denies a tool call waiting for the
	// person's permission; always also allows every identical call.
	AnswerPermission(ctx context.Context, id string, approve, always bool, reason string) (string, error)
	// AllowForSession allows a waiting tool call and, while the team runs,
	// every command of its prefix rule (go test *).
	AllowForSession(ctx context.Context, id string) (string, error)
	// Compact summarizes the older half of the lead's conversation now.
	Compact() (string, error)
	// Usage is what each agent of this process spent so far, and the total.
	Usage() registry.TeamUsage
	// SetLeadModel switches the lead's model ("model" or "provider/model",
	// one of those configured) and returns its label.
	SetLeadModel(spec string) (string, error)
	// Models is what is configured and the label of the lead's model now.
	Models() (models.Catalog, string)
	// AnswerBudget says whether the team goes on past its reached budget.
	AnswerBudget(goOn bool) (string, error)
}

// Inboxes are the inboxes as a chat reads them, on any store
// (team.Mailbox), each with a mark that tells cheaply whether it changed.
type Inboxes interface {
	Names(ctx context.Context) ([]string, error)
	ReadAll(ctx context.Context, name string) ([]inbox.Message, []inbox.BadLine, error)
	Stats(ctx context.Context, name string) (inbox.Stats, error)
	Mark(ctx context.Context, name string) (inbox.Mark, error)
}

// teamEngine is the Engine of a running team; chat is nil without a model.
type teamEngine struct {
	t    *team.Team
	chat *team.Chat
}

// NewEngine is the Engine of a running team; chat is nil without a model.
func NewEngine(t *team.Team, chat *team.Chat) Engine { return &teamEngine{t: t, chat: chat} }

func (e *teamEngine) Say(text string) error {
	if e.chat == nil {
		return fmt.Errorf("the lead has no model to answer with")
	}
	return e.chat.Say(text)
}

func (e *teamEngine) Send(ctx context.Context, to, content string) error {
	return e.t.Messenger().Send(ctx, inbox.UserName, to, content)
}

// EndedNote says a teammate that has ended reads nothing now ("" else).
func (e *teamEngine) EndedNote(ctx context.Context, to string) string {
	c, err := e.t.Registry().Read(ctx)
	if err != nil {
		return ""
	}
	return team.EndedNote(c, to)
}

func (e *teamEngine) Broadcast(ctx context.Context, content string) ([]string, error) {
	return e.t.Messenger().Broadcast(ctx, inbox.UserName, content)
}

func (e *teamEngine) Spawn(ctx context.Context, spec tools.SpawnSpec) error {
	return e.t.Spawn(ctx, inbox.UserName, spec)
}

func (e *teamEngine) SetAuto(on bool) {
	if e.chat != nil {
		e.chat.SetAuto(on)
	}
}

func (e *teamEngine) Interrupt() bool {
	if e.chat == nil {
		return false
	}
	return e.chat.Interrupt()
}

func (e *teamEngine) Conversation(name string) ([]openai.ChatCompletionMessage, bool) {
	return e.t.Conversation(name)
}

func (e *teamEngine) SetLeadModel(spec string) (string, error) {
	if e.chat == nil {
		return "", fmt.Errorf("the lead has no model to switch: it cannot answer without a key")
	}
	return e.t.Models().SetLead(spec)
}

func (e *teamEngine) AnswerBudget(goOn bool) (string, error) { return e.t.Models().AnswerBudget(goOn) }

func (e *teamEngine) Models() (models.Catalog, string) {
	return e.t.Models().Catalog(), e.t.Models().Lead()
}

func (e *teamEngine) Compact() (string, error) {
	if e.chat == nil {
		return "", errors.New("no conversation with the lead runs here")
	}
	return e.chat.Compact(), nil
}

func (e *teamEngine) Usage() registry.TeamUsage { return e.t.Models().Usage() }

func (e *teamEngine) Describe(ctx context.Context) (string, error) {
	return e.t.Messenger().Describe(ctx)
}

func (e *teamEngine) Inbox(ctx context.Context, name string) (string, error) {
	return InboxText(ctx, e.t.Mailbox(), name)
}

// InboxText is /inbox's answer: every inbox (name "") or one inbox's
// messages, as text.
func InboxText(ctx context.Context, store Inboxes, name string) (string, error) {
	var b strings.Builder
	if name == "" {
		names, err := store.Names(ctx)
		if err != nil {
			return "", err
		}
		if len(names) == 0 {
			return "no inboxes yet", nil
		}
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "INBOX\tUNREAD\tTOTAL")
		for _, n := range names {
			st, err := store.Stats(ctx, n)
			if err != nil {
				return "", err
			}
			fmt.Fprintf(tw, "%s\t%d\t%d\n", n, st.Unread, st.Total)
		}
		tw.Flush()
		return strings.TrimRight(b.String(), "\n"), nil
	}
	if err := inbox.ValidateName(name); err != nil {
		return "", err
	}
	msgs, bad, err := store.ReadAll(ctx, name)
	if err != nil {
		return "", err
	}
	if len(msgs) == 0 && len(bad) == 0 {
		return fmt.Sprintf("%s's inbox is empty", name), nil
	}
	for _, m := range msgs {
		fmt.Fprintf(&b, "%s %s → %s (%s): %s\n", m.Timestamp.Local().Format("15:04:05"), m.From, m.To, m.Type, FirstLine(m.Content, 200))
	}
	if len(bad) > 0 {
		fmt.Fprintf(&b, "(%d lines that do not parse were set aside)\n", len(bad))
	}
	return strings.TrimRight(b.String(), "\n"), nil
}
