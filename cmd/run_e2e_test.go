package cmd

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

func call(name, args string) fakellm.ToolCall { return fakellm.ToolCall{Name: name, Args: args} }

// fakeEnv points the binary at a fake model server.
func fakeEnv(srv *fakellm.Server) []string {
	return []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + srv.URL(), "AGENTTEAM_MODEL=fake-model"}
}

func TestRunEndToEndTeamThroughTheBinary(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{Status: 429, RetryAfter: "1"},
			{ToolCalls: []fakellm.ToolCall{
				call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write hello.txt and greet bob"}`),
				call("spawn_teammate", `{"name":"bob","role":"tester","prompt":"wait for alice"}`),
			}},
			{ToolCalls: []fakellm.ToolCall{
				call("broadcast", `{"content":"status check"}`),
				call("send_message", `{"to": "alice", "content": `),
				call("fly", `{}`),
				call("read_file", `{"path":"../../etc/passwd"}`),
				call("spawn_teammate", `{"name":"../x","role":"r","prompt":"p"}`),
				call("send_message", `{"to":"nobody","content":"hi"}`),
			}},
			{Content: "all set"},
		},
		"alice": {
			{ToolCalls: []fakellm.ToolCall{
				call("write_file", `{"path":"hello.txt","content":"hello from alice\n"}`),
				call("send_message", `{"to":"bob","content":"hello bob"}`),
			}},
			{Content: "alice done: wrote hello.txt"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		switch c.Agent {
		case "lead":
			return fakellm.Reply{Content: "noted: the team reported"}
		default:
			return fakellm.Reply{Content: c.Agent + ": ack"}
		}
	})
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()

	r := runBin(t, ws, fakeEnv(srv), "", "run", "build hello and have bob check it")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("the model server saw protocol violations: %v", v)
	}

	// The answer printed is the lead's last reply.
	leadMsgs := readSession(t, filepath.Join(ws, ".agentteam", "sessions", "lead.jsonl"))
	last := leadMsgs[len(leadMsgs)-1]
	if last.Role != openai.ChatMessageRoleAssistant || strings.TrimSpace(r.stdout) != last.Content {
		t.Fatalf("stdout %q is not the lead's last reply %+v", r.stdout, last)
	}

	// The 429 was retried.
	if !strings.Contains(r.stderr, "retrying") {
		t.Errorf("stderr does not mention the retry:\n%s", r.stderr)
	}

	// Registry: both teammates shut down after settling.
	reg := registry.NewRegistry(filepath.Join(ws, ".agentteam", "team", "config.json"), "")
	cfg, err := reg.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Teammates) != 2 {
		t.Fatalf("registry has %d teammates, want 2: %+v", len(cfg.Teammates), cfg.Teammates)
	}
	for _, m := range cfg.Teammates {
		if m.Status != registry.StatusShutdown {
			t.Errorf("%s is %s after the run, want shutdown", m.Name, m.Status)
		}
		if m.Turns == 0 {
			t.Errorf("%s has no turns recorded", m.Name)
		}
	}

	// Inboxes hold what happened.
	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))
	bob, _, err := store.ReadAll(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	if !hasMessage(bob, "alice", inbox.TypeMessage, "hello bob") || !hasMessage(bob, "lead", inbox.TypeBroadcast, "status check") {
		t.Errorf("bob's inbox lacks alice's message or the broadcast: %+v", bob)
	}
	lead, _, _ := store.ReadAll(t.Context(), "lead")
	if !hasMessage(lead, "alice", inbox.TypeResult, "alice done") || !hasMessage(lead, "bob", inbox.TypeResult, "bob: ack") {
		t.Errorf("the lead's inbox lacks the teammates' results: %+v", lead)
	}
	for _, name := range []string{"lead", "alice", "bob"} {
		if st, _ := store.Stats(t.Context(), name); st.Unread != 0 {
			t.Errorf("%s still has %d unread after settling", name, st.Unread)
		}
	}
	if data, err := os.ReadFile(filepath.Join(ws, "hello.txt")); err != nil || string(data) != "hello from alice\n" {
		t.Errorf("hello.txt: %q, %v", data, err)
	}

	// Each bad tool call came back to the model as a tool error.
	var toolResults []string
	for _, m := range leadMsgs {
		if m.Role == openai.ChatMessageRoleTool {
			toolResults = append(toolResults, m.Content)
		}
	}
	joined := strings.Join(toolResults, "\n---\n")
	for _, want := range []string{"fly", "outside the workspace", "../x", "nobody", "JSON"} {
		found := false
		for _, tr := range toolResults {
			if strings.Contains(tr, want) && strings.HasPrefix(tr, "error") {
				found = true
			}
		}
		if !found {
			t.Errorf("no tool error mentioning %q among the lead's tool results:\n%s", want, joined)
		}
	}

	// Sessions and events exist for everyone.
	for _, name := range []string{"alice", "bob"} {
		if msgs := readSession(t, filepath.Join(ws, ".agentteam", "sessions", name+".jsonl")); len(msgs) < 2 {
			t.Errorf("%s's session has %d messages", name, len(msgs))
		}
	}
	events := readEvents(t, filepath.Join(ws, ".agentteam", "events.jsonl"))
	kinds := map[event.EventKind]int{}
	for _, e := range events {
		kinds[e.Kind]++
	}
	for _, k := range []event.EventKind{event.EventSpawn, event.EventStatus, event.EventMessage, event.EventToolCall, event.EventSettled} {
		if kinds[k] == 0 {
			t.Errorf("events.jsonl has no %q event (kinds: %v)", k, kinds)
		}
	}
	// The key is never written anywhere.
	assertNoKeyInFiles(t, ws, "test-key")
}

func TestRunWithoutKeyOrDemoSaysHowToFixIt(t *testing.T) {
	r := runBin(t, t.TempDir(), nil, "", "run", "hello")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "OPENAI_API_KEY") || !strings.Contains(r.stderr, "--demo") {
		t.Fatalf("stderr does not name OPENAI_API_KEY and --demo: %q", r.stderr)
	}
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("want one sentence on stderr, got:\n%s", r.stderr)
	}
}

func TestRunAuthFailureNamesTheKey(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Status: 401}))
	defer srv.Close()
	env := []string{"OPENAI_API_KEY=wrong-key", "OPENAI_BASE_URL=" + srv.URL()}
	r := runBin(t, t.TempDir(), env, "", "run", "hello")
	if r.code != 1 || !strings.Contains(r.stderr, "OPENAI_API_KEY") {
		t.Fatalf("exit %d stderr %q: want 1 and a sentence naming OPENAI_API_KEY", r.code, r.stderr)
	}
	if n := srv.CallsFor("lead"); n != 1 {
		t.Fatalf("a 401 was tried %d times, want once", n)
	}
}

func hasMessage(msgs []inbox.Message, from string, typ inbox.MessageType, contains string) bool {
	for _, m := range msgs {
		if m.From == from && m.Type == typ && strings.Contains(m.Content, contains) {
			return true
		}
	}
	return false
}

func readSession(t *testing.T, path string) []openai.ChatCompletionMessage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	defer f.Close()
	var out []openai.ChatCompletionMessage
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m openai.ChatCompletionMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("session line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// wireEvent is a line of events.jsonl as another program reads it: one flat
// object whose fields keep the names they had when team.Event was flat.
type wireEvent struct {
	Kind    event.EventKind `json:"kind"`
	Agent   string          `json:"agent"`
	Status  string          `json:"status"`
	From    string          `json:"from"`
	To      string          `json:"to"`
	Type    string          `json:"type"`
	Tool    string          `json:"tool"`
	Args    string          `json:"args"`
	Detail  string          `json:"detail"`
	IsError bool            `json:"is_error"`
}

// readEvents reads events.jsonl as flat lines; every line also reads back
// into a team.Event of the same kind.
func readEvents(t *testing.T, path string) []wireEvent {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []wireEvent
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e wireEvent
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("events line %q: %v", line, err)
		}
		var typed event.Event
		if err := json.Unmarshal([]byte(line), &typed); err != nil || typed.Kind() != e.Kind {
			t.Fatalf("events line %q read as a %q event: %v", line, typed.Kind(), err)
		}
		out = append(out, e)
	}
	return out
}

func assertNoKeyInFiles(t *testing.T, root, key string) {
	t.Helper()
	err := filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(data), key) {
			t.Errorf("the API key appears in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
