package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/team/event"
)

// systemOf is the system prompt of a recorded request.
func systemOf(t *testing.T, req openai.ChatCompletionRequest) string {
	t.Helper()
	if len(req.Messages) == 0 || req.Messages[0].Role != openai.ChatMessageRoleSystem {
		t.Fatalf("the request has no system prompt: %+v", req.Messages)
	}
	return req.Messages[0].Content
}

// inOrder fails unless each of want is in s, each after the one before.
func inOrder(t *testing.T, who, s string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			t.Fatalf("%s's system prompt lacks %q after byte %d:\n%s", who, w, at, s)
		}
		at += i + len(w)
	}
}

// The AGENTS.md files reach every agent's instructions through the binary:
// the person's own first, then from the repository's top down to where the
// agent works, the project's fallback (CLAUDE.md) where a directory has no
// AGENTS.md, cut at the cap with a sentence; an isolated teammate reads its
// worktree's; and an edit made between two cycles is in the next request.
func TestAgentsMDReachTheAgentsThroughTheBinary(t *testing.T) {
	repo := gitRepo(t)
	mid := filepath.Join(repo, "mid")
	ws := filepath.Join(mid, "ws")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	testWriteFile(t, filepath.Join(repo, "AGENTS.md"), "ROOT-RULE: run go test.\n")
	testWriteFile(t, filepath.Join(mid, "AGENTS.md"), "MID-RULE: keep files small.\n")
	testWriteFile(t, filepath.Join(ws, "CLAUDE.md"), "SUB-FALLBACK: "+strings.Repeat("long ", 600)+"TAIL-NEVER-SENT\n")
	gitIn(t, repo, "add", "-A")
	gitIn(t, repo, "commit", "--quiet", "-m", "instructions")
	// The project names the fallback; no trust is needed for that.
	if err := os.MkdirAll(filepath.Join(ws, ".agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	testWriteFile(t, filepath.Join(ws, ".agentteam", "config.toml"), "[context]\nfiles = [\"CLAUDE.md\"]\n")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	testWriteFile(t, filepath.Join(home, ".config", "agentteam", "AGENTS.md"), "USER-RULE: answer briefly.\n")
	testWriteFile(t, filepath.Join(home, ".config", "agentteam", "config.toml"), "[context]\nmax_bytes = 2048\n")

	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{
				call("spawn_teammate", `{"name":"alice","role":"writer","prompt":"shorten CLAUDE.md"}`),
				call("spawn_teammate", `{"name":"bob","role":"reader","prompt":"look around","isolation":"worktree"}`),
			}},
			{Content: "waiting for alice and bob"},
		},
		"alice": {
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"CLAUDE.md","content":"EDITED-RULE: short now.\n"}`)}},
			{Content: "CLAUDE.md is short now"},
		},
		"bob": {{Content: "looked around"}},
	}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "noted"} }), fakellm.WithAPIKey("test-key"))
	defer srv.Close()

	r := runBin(t, ws, append(fakeEnv(srv), "HOME="+home), "", "run", "--timeout", "60s", "--permission-mode", "auto-edit", "shorten the notes")
	mustSucceed(t, r, "run")
	noViolations(t, srv)

	userFile := "--- ~/.config/agentteam/AGENTS.md (the person's own) ---\nUSER-RULE"
	cut := "[The instructions are cut here: AGENTS.md files are read up to 2048 bytes in all, and the rest of " + filepath.Join(ws, "CLAUDE.md") + " is left out.]"
	chain := []string{userFile,
		"--- " + filepath.Join(repo, "AGENTS.md") + " ---\nROOT-RULE",
		"--- " + filepath.Join(mid, "AGENTS.md") + " ---\nMID-RULE",
		"--- " + filepath.Join(ws, "CLAUDE.md") + " ---\nSUB-FALLBACK", cut}

	lead := srv.Requests("lead")
	if len(lead) < 3 {
		t.Fatalf("the lead made %d requests", len(lead))
	}
	first := systemOf(t, lead[0])
	inOrder(t, "the lead", first, append([]string{"You are the lead"}, chain...)...)
	if strings.Contains(first, "TAIL-NEVER-SENT") {
		t.Fatal("the text past the cap reached the model")
	}
	inOrder(t, "alice", systemOf(t, srv.Requests("alice")[0]), append([]string{"Your name: alice"}, chain...)...)

	// bob works in his worktree: its own files, the committed ones, from its top down.
	wt := filepath.Join(ws, ".agentteam", "worktrees", "bob")
	inOrder(t, "bob", systemOf(t, srv.Requests("bob")[0]), "Your name: bob", userFile,
		"--- "+filepath.Join(wt, "AGENTS.md")+" ---\nROOT-RULE",
		"--- "+filepath.Join(wt, "mid", "AGENTS.md")+" ---\nMID-RULE",
		"--- "+filepath.Join(wt, "mid", "ws", "CLAUDE.md")+" ---\nSUB-FALLBACK")

	// alice's edit, made while the lead waited, is in its next cycle's request.
	last := systemOf(t, lead[len(lead)-1])
	inOrder(t, "the lead (last)", last, userFile, "ROOT-RULE", "MID-RULE", "--- "+filepath.Join(ws, "CLAUDE.md")+" ---\nEDITED-RULE: short now.")
	if strings.Contains(last, "SUB-FALLBACK") || strings.Contains(last, "are cut here") {
		t.Fatalf("the lead's last request still has the old text:\n%s", last)
	}

	// The person is told which files the lead reads, and of the cut.
	if !strings.Contains(r.stderr, "lead reads ~/.config/agentteam/AGENTS.md, "+filepath.Join(repo, "AGENTS.md")) || !strings.Contains(r.stderr, "are cut here") {
		t.Errorf("stderr does not say what the lead reads:\n%s", r.stderr)
	}
	if !hasEvent(readEvents(t, state(ws, "events.jsonl")), event.EventInstructions, "alice") {
		t.Error("no instructions event for alice")
	}
}

// Without any AGENTS.md the system prompt is what it always was.
func TestNoAgentsMDLeavesTheSystemPromptAlone(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--timeout", "30s", "hi")
	mustSucceed(t, r, "run")
	sys := systemOf(t, srv.Requests("lead")[0])
	if strings.Contains(sys, "AGENTS.md") || strings.Contains(r.stderr, "AGENTS.md") {
		t.Fatalf("AGENTS.md is spoken of with none there:\n%s\n%s", sys, r.stderr)
	}
}

// An AGENTS.md that is a FIFO is skipped with one sentence, at once: the
// run ends well inside its --timeout, and the fallback stands in.
func TestAFIFOAgentsMDIsSkippedAtOnce(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "AGENTS.md"), 0o644); err != nil {
		t.Skip(err)
	}
	testWriteFile(t, filepath.Join(ws, "CRUSH.md"), "CRUSH-RULE\n")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	testWriteFile(t, filepath.Join(home, ".config", "agentteam", "config.toml"), "[context]\nfiles = [\"CRUSH.md\"]\n")
	start := time.Now()
	wait, _ := startBinWithin(t, 30*time.Second, ws, append(fakeEnv(srv), "HOME="+home), "run", "--timeout", "10s", "hi")
	r := wait()
	if took := time.Since(start); took > 8*time.Second {
		t.Fatalf("the run took %s (--timeout 10s): it waited on the FIFO", took.Round(time.Second))
	}
	mustSucceed(t, r, "run")
	want := filepath.Join(ws, "AGENTS.md") + " is skipped: it is a named pipe (FIFO), not a regular file."
	if !strings.Contains(r.stderr, want) {
		t.Fatalf("stderr lacks %q:\n%s", want, r.stderr)
	}
	if sys := systemOf(t, srv.Requests("lead")[0]); !strings.Contains(sys, "CRUSH-RULE") {
		t.Fatalf("the fallback did not stand in:\n%s", sys)
	}
}

// Being in the instructions does not get round a rule: a file whose
// read_file a deny rule refuses is skipped with the rule, never sent.
func TestADeniedAgentsMDIsNotSent(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	testWriteFile(t, filepath.Join(ws, "AGENTS.md"), "PRIVATE-NOTES\n")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	testWriteFile(t, filepath.Join(home, ".config", "agentteam", "config.toml"), "[permissions]\ndeny = [\"read_file(AGENTS.md)\"]\n")
	r := runBin(t, ws, append(fakeEnv(srv), "HOME="+home), "", "run", "--timeout", "30s", "hi")
	mustSucceed(t, r, "run")
	if sys := systemOf(t, srv.Requests("lead")[0]); strings.Contains(sys, "PRIVATE-NOTES") {
		t.Fatalf("a denied file reached the model:\n%s", sys)
	}
	if want := filepath.Join(ws, "AGENTS.md") + " is skipped: the deny rule read_file(AGENTS.md)"; !strings.Contains(r.stderr, want) {
		t.Fatalf("stderr lacks %q:\n%s", want, r.stderr)
	}
}

// chat in lines says once, at the start, which files the lead reads;
// /init says the fixed prompt to the lead as the person's message.
func TestChatInLinesTellsTheFilesAndInitAsksForOne(t *testing.T) {
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "wrote AGENTS.md"}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()
	testWriteFile(t, filepath.Join(ws, "AGENTS.md"), "WS-RULE\n")
	r := runBin(t, ws, fakeEnv(srv), "/init\n", "chat")
	mustSucceed(t, r, "chat in lines")
	told := "lead reads " + filepath.Join(ws, "AGENTS.md")
	if strings.Count(r.stdout, told) != 1 || strings.Index(r.stdout, told) > strings.Index(r.stdout, "lead> /init") {
		t.Fatalf("stdout does not say once, first, %q:\n%s", told, r.stdout)
	}
	if !strings.Contains(r.stdout, engine.InitPrompt) {
		t.Fatalf("the person does not see what /init said:\n%s", r.stdout)
	}
	reqs := srv.Requests("lead")
	if len(reqs) != 1 {
		t.Fatalf("%d requests of the lead", len(reqs))
	}
	msgs := reqs[0].Messages
	if last := msgs[len(msgs)-1]; last.Role != openai.ChatMessageRoleUser || last.Content != engine.InitPrompt || !strings.Contains(msgs[0].Content, "WS-RULE") {
		t.Fatalf("the lead was asked %+v", msgs)
	}
}
