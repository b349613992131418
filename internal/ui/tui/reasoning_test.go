package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// Reasoning (reasoning_content / reasoning) is shown dimmed, folded to one
// line per reply until ctrl+t or /reasoning shows it whole.

func thinkingBatch(agent, reasoning, text string) bridge.Batch {
	return bridge.Batch{Items: []bridge.Item{{Delta: &bridge.Chunk{Agent: agent, Reasoning: reasoning}}, {Delta: &bridge.Chunk{Agent: agent, Text: text}}}}
}

func TestReasoningIsFoldedUntilAsked(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.enter("what is 6 times 7?")
	hs.send(thinkingBatch("lead", "Six sevens.\nThat is forty-two.\nCheck: 7*6=42.", "It is 42."))
	// While the reply streams, the thinking is one line already.
	hs.mustSee("thinking… (3 lines)", "It is")
	hs.mustNotSee("forty-two")
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: "It is 42."}}))
	hs.mustSee("thinking… (3 lines)", "It is 42")
	hs.mustNotSee("forty-two")

	hs.send(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	hs.mustSee("Six sevens.", "That is forty-two.", "Check: 7*6=42.", "It is 42")
	hs.mustNotSee("thinking… (3 lines)")

	hs.enter("/reasoning")
	hs.mustSee("thinking… (3 lines)")
	hs.mustNotSee("forty-two")
	hs.enter("/reasoning on")
	hs.mustSee("That is forty-two.")
	hs.enter("/reasoning on")
	hs.mustSee("That is forty-two.") // on stays on
	hs.enter("/reasoning off")
	hs.mustNotSee("forty-two")
	hs.enter("/reasoning maybe")
	hs.mustSee("/reasoning takes on or off")
}

// TestReasoningOfATurnThatCalledTools: thinking with no text (the turn
// called tools) is kept as its own folded line, and the next turn's
// thinking starts a new reply.
func TestReasoningOfATurnThatCalledTools(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.enter("write a file")
	hs.send(bridge.Batch{Items: []bridge.Item{{Delta: &bridge.Chunk{Agent: "lead", Reasoning: "I should write a.txt."}}}})
	hs.send(events(event.Event{Agent: "lead", Payload: event.ToolCall{Tool: "write_file", Args: `{"path":"a.txt"}`, Result: "wrote a.txt"}}))
	hs.send(thinkingBatch("lead", "Done.\nSay so.", "Wrote a.txt."))
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: "Wrote a.txt."}}))
	hs.mustSee("thinking… (1 line)", "write_file", "thinking… (2 lines)", "Wrote a.txt.")
	v := hs.view()
	if strings.Index(v, "(1 line)") > strings.Index(v, "write_file") || strings.Index(v, "write_file") > strings.Index(v, "(2 lines)") {
		t.Errorf("the order is not thinking, tool call, thinking:\n%s", v)
	}
	// A restart (the stream broke off) drops the thinking shown so far.
	hs.enter("again")
	hs.send(bridge.Batch{Items: []bridge.Item{{Delta: &bridge.Chunk{Agent: "lead", Reasoning: "half a thought"}}}})
	hs.send(bridge.Batch{Items: []bridge.Item{{Delta: &bridge.Chunk{Agent: "lead", Restart: true, Reasoning: "a whole thought\nin two lines"}}}})
	hs.send(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	hs.mustSee("a whole thought")
	hs.mustNotSee("half a thought")
}

// TestTeammatesReasoningFromItsSession: a focused teammate's conversation,
// read from its session, shows the reasoning kept there the same way.
func TestTeammatesReasoningFromItsSession(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	hs.eng.convs["alice"] = []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "check a.txt"},
		{Role: openai.ChatMessageRoleAssistant, ReasoningContent: "a.txt should exist.\nRead it first.",
			ToolCalls: []openai.ToolCall{{ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a.txt"}`}}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "c1", Content: "hello"},
		{Role: openai.ChatMessageRoleAssistant, Content: "a.txt says hello"},
	}
	hs.send(events(event.Event{Agent: "alice", Payload: event.Spawn{Role: "tester", Status: registry.StatusIdle}}))
	hs.key(tea.KeyTab)
	hs.flush()
	hs.mustSee("thinking… (2 lines)", "read_file", "a.txt says hello")
	hs.send(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	hs.mustSee("a.txt should exist.", "Read it first.")
}

// TestEngineDeliversReasoning: a real team over the model client, against
// a server that streams reasoning_content: the thinking reaches the bridge.
func TestEngineDeliversReasoning(t *testing.T) {
	for _, tc := range []struct {
		field  string
		stream bool
	}{{"reasoning_content", true}, {"reasoning", true}, {"reasoning_content", false}} {
		t.Run(fmt.Sprintf("%s stream=%v", tc.field, tc.stream), func(t *testing.T) {
			srv := fakellm.New(fakellm.Always(fakellm.Reply{Reasoning: "alice weighs it up", ReasoningField: tc.field, Content: "alice: done"}))
			defer srv.Close()
			ws, err := workspace.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			b := bridge.New()
			model := llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "m", Stream: tc.stream})
			tm, err := team.Open(context.Background(), team.Options{Workspace: ws, Model: model, OnEvent: b.Event, OnDelta: b.Delta,
				PollInterval: 20 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				tm.ShutdownAll("test over")
				tm.Close(context.Background())
			}()
			eng := engine.NewEngine(tm, nil)
			if err := eng.Spawn(context.Background(), tools.SpawnSpec{Name: "alice", Role: "tester", Prompt: "think"}); err != nil {
				t.Fatal(err)
			}
			var reasoning, text strings.Builder
			// The bound only catches a hang.
			testkit.EventuallyF(t, 30*time.Second, "alice's reasoning on the bridge", func() bool {
				for m, ok := b.Take(); ok; m, ok = b.Take() {
					for _, it := range m.Items {
						if it.Delta != nil && it.Delta.Agent == "alice" {
							reasoning.WriteString(it.Delta.Reasoning)
							text.WriteString(it.Delta.Text)
						}
					}
				}
				return reasoning.String() == "alice weighs it up"
			}, func() string { return fmt.Sprintf("reasoning %q text %q", reasoning.String(), text.String()) })
		})
	}
}
