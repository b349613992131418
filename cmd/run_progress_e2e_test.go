package cmd

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
)

// TestClosedPortIsOneSentence: nothing listens at the base URL. The run ends
// after two short retries (never "retrying in 0s") with a sentence naming the
// server, not Go's dial text.
func TestClosedPortIsOneSentence(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	r := runBin(t, t.TempDir(), []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + base, "AGENTTEAM_MODEL=fake-model"}, "", "run", "hello")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	last := strings.TrimSpace(r.stderr)
	last = last[strings.LastIndex(last, "\n")+1:]
	if !strings.HasPrefix(last, "agentteam: the lead stopped: cannot reach the model server at "+base+": connection refused") {
		t.Errorf("last line %q does not name the server", last)
	}
	if n := strings.Count(r.stderr, "retrying in"); n != 2 {
		t.Errorf("%d retries, want 2:\n%s", n, r.stderr)
	}
	for _, bad := range []string{"retrying in 0s", "dial tcp"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("stderr says %q:\n%s", bad, r.stderr)
		}
	}
}

// TestRunPrintsEveryToolCall: without --json each tool call leaves one
// stderr line, as the TUI shows it: a bash that deleted a file is seen.
func TestRunPrintsEveryToolCall(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("bash", `{"command":"rm notes.txt"}`),
				call("read_file", `{"path":"missing.go"}`),
			}},
			{Content: "cleaned up"},
		},
	}, nil)
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runBin(t, ws, fakeEnv(srv), "", "run", "tidy up")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if _, err := os.Stat(filepath.Join(ws, "notes.txt")); !os.IsNotExist(err) {
		t.Fatalf("bash did not delete notes.txt: %v", err)
	}
	for _, want := range []string{"lead: bash rm notes.txt  ✓\n", "lead: read_file missing.go  ✗ "} {
		if strings.Count(r.stderr, want) != 1 {
			t.Errorf("stderr has not one %q:\n%s", want, r.stderr)
		}
	}
	if r.stdout != "cleaned up\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	// --quiet prints only the answer.
	quiet := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"true"}`)}}, {Content: "ok"}},
	}, nil), fakellm.WithAPIKey("test-key"))
	defer quiet.Close()
	r = runBin(t, t.TempDir(), fakeEnv(quiet), "", "run", "--quiet", "go")
	mustSucceed(t, r, "run --quiet")
	if strings.Contains(r.stderr, "bash") {
		t.Errorf("--quiet printed tool calls:\n%s", r.stderr)
	}
}

// TestRunJSONAlwaysCloses: every line of `run --json` has a time, and the last
// line closes the run: the answer, or an end event saying why there is none
// (a 1 ms timeout once wrote nothing at all).
func TestRunJSONAlwaysCloses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	cases := []struct {
		name    string
		env     []string
		args    []string
		code    int
		kind    string
		outcome string
		says    string
	}{
		{"answer", nil, []string{"--demo", "list team"}, 0, "answer", "", ""},
		{"timeout", nil, []string{"--demo", "--timeout", "1ms", "spawn alice as writer"}, 3, "end", "timeout", "timed out after 1ms"},
		{"error", []string{"OPENAI_API_KEY=k", "OPENAI_BASE_URL=" + closed}, []string{"hello"}, 1, "end", "error", "cannot reach the model server"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := runBin(t, t.TempDir(), c.env, "", append([]string{"run", "--json"}, c.args...)...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, c.code, r.stdout, r.stderr)
			}
			var last map[string]any
			for i, line := range strings.Split(strings.TrimRight(r.stdout, "\n"), "\n") {
				var v map[string]any
				if err := json.Unmarshal([]byte(line), &v); err != nil {
					t.Fatalf("stdout line %d is not JSON: %q", i+1, line)
				}
				ts, _ := v["time"].(string)
				if tm, err := time.Parse(time.RFC3339Nano, ts); err != nil || tm.IsZero() || tm.Year() < 2000 {
					t.Errorf("line %d has no time: %s", i+1, line)
				}
				last = v
			}
			if last["kind"] != c.kind {
				t.Fatalf("the last line is %v, want kind %q", last, c.kind)
			}
			if c.kind == "end" {
				detail, _ := last["detail"].(string)
				if last["outcome"] != c.outcome || last["exit_code"] != float64(c.code) || !strings.Contains(detail, c.says) {
					t.Errorf("end event %v, want outcome %q, exit_code %d, detail saying %q", last, c.outcome, c.code, c.says)
				}
			}
		})
	}
}

// TestDemoAnswersTheSamePromptTheSameWay: what --demo's lead says over a
// run does not depend on when the teammates' reports reach it: each report
// in the same words, once; only which answer says it does (the prompt's, or
// the short progress answer of the wake the report brought).
func TestDemoAnswersTheSamePromptTheSameWay(t *testing.T) {
	const prompt = "spawn alice as writer to write a poem; spawn bob as tester to check it; send alice: hi; tell bob to message alice: thanks; broadcast: standup; list team"
	var first string
	for i := 0; i < 4; i++ {
		ws := t.TempDir()
		r := runBin(t, ws, nil, "", "run", "--demo", prompt)
		mustSucceed(t, r, "run --demo")
		said := strings.Join(leadSaid(t, ws), "\n")
		if i == 0 {
			first = said
			continue
		}
		if said != first {
			t.Fatalf("run %d said differently:\n%s\nthe first run:\n%s", i+1, said, first)
		}
	}
	for _, want := range []string{"- alice: done — received from lead: hi", "- bob: done — sent to alice: thanks", "- alice: done — received from bob: thanks"} {
		if strings.Count(first, want) != 1 {
			t.Errorf("the answers do not say %q once:\n%s", want, first)
		}
	}
}

// leadSaid is the lines of the lead's answers in the workspace's session,
// sorted, blank lines and the heading of the team's reports aside.
func leadSaid(t *testing.T, ws string) []string {
	t.Helper()
	var lines []string
	for _, m := range readSession(t, state(ws, "sessions", "lead.jsonl")) {
		if m.Role != openai.ChatMessageRoleAssistant || len(m.ToolCalls) > 0 {
			continue
		}
		for _, l := range strings.Split(m.Content, "\n") {
			if l != "" && l != "The team said:" {
				lines = append(lines, l)
			}
		}
	}
	slices.Sort(lines)
	return lines
}

// TestATeammateFailureIsOneEvent: alice's model refuses her request. Her
// failure is one error event and one stderr line, not two 0.2 ms apart.
func TestATeammateFailureIsOneEvent(t *testing.T) {
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"writer","prompt":"write"}`)}},
			{Content: "spawned"},
		},
		"alice": {{Status: 400, Content: "the request is malformed"}},
	}, func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "noted"} }), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "go")
	mustSucceed(t, r, "run")
	n := 0
	for _, e := range readEvents(t, filepath.Join(ws, ".agentteam", "events.jsonl")) {
		if e.Kind == event.EventError && e.Agent == "alice" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("alice's one failure is %d error events", n)
	}
	if c := strings.Count(r.stderr, "alice: error: the model server answered HTTP 400"); c != 1 {
		t.Errorf("alice's failure is on stderr %d times:\n%s", c, r.stderr)
	}
}

// A shutdown's request is printed before the answer it gets, however soon
// the idle teammate's runtime answers (runs raced 1 in 6 before).
func TestRunPrintsAShutdownRequestBeforeItsAnswer(t *testing.T) {
	for i := range 12 {
		r := runBin(t, t.TempDir(), nil, "", "run", "--demo", "spawn alice as programmer; shutdown alice")
		mustSucceed(t, r, "run")
		req, resp := strings.Index(r.stderr, "lead → alice (shutdown_request)"), strings.Index(r.stderr, "alice → lead (shutdown_response)")
		if req < 0 || resp < 0 || resp < req {
			t.Fatalf("run %d: the answer (at %d) before its request (at %d):\n%s", i+1, resp, req, r.stderr)
		}
	}
}
