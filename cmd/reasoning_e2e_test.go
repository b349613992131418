package cmd

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
)

// TestRunJSONCarriesReasoning: a model that thinks aloud
// (DeepSeek's reasoning_content, OpenRouter's reasoning), streamed or not,
// has its thinking in each of its turns' reply events of `run --json` and
// of events.jsonl; a turn without thinking carries no reasoning field.
func TestRunJSONCarriesReasoning(t *testing.T) {
	for _, tc := range []struct {
		field string
		args  []string
	}{
		{"reasoning_content", nil},
		{"reasoning", nil},
		{"reasoning_content", []string{"--no-stream"}},
	} {
		t.Run(tc.field+strings.Join(tc.args, ""), func(t *testing.T) {
			t.Parallel()
			srv := fakellm.New(leadScript(
				fakellm.Reply{Reasoning: "The lead should write a.txt first.", ReasoningField: tc.field,
					ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"a.txt","content":"A"}`)}},
				fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"b.txt","content":"B"}`)}},
				fakellm.Reply{Reasoning: "Both are written.", ReasoningField: tc.field, Content: "all done"},
			), fakellm.WithAPIKey("test-key"))
			defer srv.Close()
			ws := t.TempDir()
			args := append([]string{"run", "--json"}, tc.args...)
			r := runBin(t, ws, fakeEnv(srv), "", append(args, "write two files")...)
			mustSucceed(t, r, "run --json")
			noViolations(t, srv)
			want := []string{"The lead should write a.txt first.", "", "Both are written."}
			if got := leadReasoning(t, strings.Split(strings.TrimSpace(r.stdout), "\n")); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("run --json: the lead's reply events carry reasoning %q, want %q", got, want)
			}
			if got := leadReasoning(t, readLines(t, state(ws, "events.jsonl"))); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("events.jsonl: the lead's reply events carry reasoning %q, want %q", got, want)
			}
		})
	}
}

// leadReasoning is the reasoning of each of the lead's reply events, in
// order, read as people read the lines (a flat object) and as team.Event.
func leadReasoning(t *testing.T, lines []string) []string {
	t.Helper()
	var out []string
	for _, line := range lines {
		var flat struct {
			Kind      string  `json:"kind"`
			Agent     string  `json:"agent"`
			Reasoning *string `json:"reasoning"`
		}
		if err := json.Unmarshal([]byte(line), &flat); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if flat.Kind != string(event.EventReply) || flat.Agent != "lead" {
			continue
		}
		var typed event.Event
		if err := json.Unmarshal([]byte(line), &typed); err != nil {
			t.Fatalf("line %q as a team.Event: %v", line, err)
		}
		reply, ok := typed.Payload.(event.Reply)
		if !ok {
			t.Fatalf("line %q reads as %T, not a Reply", line, typed.Payload)
		}
		if flat.Reasoning != nil && *flat.Reasoning != reply.Reasoning || flat.Reasoning != nil && *flat.Reasoning == "" {
			t.Fatalf("line %q: an empty reasoning field, or one that reads back otherwise (%q)", line, reply.Reasoning)
		}
		out = append(out, reply.Reasoning)
	}
	return out
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}
