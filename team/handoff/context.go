package handoff

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
)

// How much of the sender's record a context_transfer carries.
const (
	maxDone      = 20
	maxDecisions = 5
	maxFiles     = 50
)

// workRecord reads a conversation for what a handoff passes on: the tool
// calls made (what was done), the agent's own words between them (its
// decisions), and the paths it wrote or edited (files touched), newest kept.
func workRecord(msgs []openai.ChatCompletionMessage) (done, decisions, files []string) {
	for _, m := range msgs {
		if m.Role != openai.ChatMessageRoleAssistant {
			continue
		}
		if text := strings.TrimSpace(m.Content); text != "" {
			decisions = append(decisions, event.Clip(text, 300))
		}
		for _, tc := range m.ToolCalls {
			name := tc.Function.Name
			if name == tools.HandoffName || name == tools.ReadInboxName {
				continue
			}
			var args struct{ Path, Command, ID, To string }
			_ = json.Unmarshal([]byte(tc.Function.Arguments), &args) // a call with broken arguments still counts as done
			if (name == tools.WriteFileName || name == tools.EditFileName) && args.Path != "" {
				files = slices.DeleteFunc(files, func(p string) bool { return p == args.Path })
				files = append(files, args.Path)
			}
			done = append(done, describeCall(name, args.Path, args.Command, args.ID, args.To))
		}
	}
	return tail(done, maxDone), tail(decisions, maxDecisions), tail(files, maxFiles)
}

// describeCall is one tool call in a line: "write_file notes.txt", "bash: go test ./...".
func describeCall(name, path, command, id, to string) string {
	switch {
	case command != "":
		line, _, _ := strings.Cut(command, "\n")
		return name + ": " + event.Clip(line, 120)
	case path != "":
		return name + " " + path
	case id != "":
		return name + " " + id
	case to != "":
		return name + " to " + to
	}
	return name
}

func tail(s []string, n int) []string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// contextText is the context_transfer message as the receiver reads it.
func contextText(h *Handoff, p Payload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s hands %s over to you (request %s).\nWhy: %s\n", h.from, h.label(), h.id, h.reason)
	if p.Description != "" {
		fmt.Fprintf(&b, "\nThe task:\n%s\n", p.Description)
	}
	fmt.Fprintf(&b, "\n%s's summary:\n%s\n", h.from, p.Summary)
	list := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s\n", title)
		for _, it := range items {
			fmt.Fprintf(&b, "- %s\n", strings.ReplaceAll(it, "\n", " "))
		}
	}
	list(fmt.Sprintf("What %s did (its latest tool calls):", h.from), p.Done)
	list(fmt.Sprintf("What %s said along the way (its decisions):", h.from), p.Decisions)
	list("Files touched (written or edited):", p.FilesTouched)
	b.WriteString("\nThe task is yours once this handoff completes, which happens at once unless a handoff_failed message follows.")
	if h.taskID != "" {
		fmt.Fprintf(&b, " You will own %s on the task board; when it is done, call task_update with id %s, status completed and a note on the result.", h.taskID, h.taskID)
	}
	return b.String()
}
