package cmd

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// TestLineChatResumeOffersANumberedChoice: `chat --resume` with no id, in
// lines (the input a pipe), lists the conversations numbered, asks again
// after a wrong answer, opens the one chosen (it becomes the current one,
// the one it replaces is kept) and leaves the lines after the answer to the
// chat; q opens nothing and changes nothing.
func TestLineChatResumeOffersANumberedChoice(t *testing.T) {
	ws := t.TempDir()
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "list team"), "first run")
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "say hello"), "second run")
	list := sessionsJSONOf(t, ws)
	if len(list) != 2 || list[0].Title != "say hello" || list[1].Title != "list team" {
		t.Fatalf("sessions before: %+v", list)
	}

	r := runBin(t, ws, nil, "zz\n2\n/quit\n", "chat", "--demo", "--plain", "--resume")
	mustSucceed(t, r, "chat --resume in lines")
	for _, want := range []string{
		"  1  current ", "say hello",
		"  2  " + list[1].ID, "list team",
		`"zz" is not one of them`,
		"lead> /quit", // the line after the answer went to the chat
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("chat --resume in lines: the output lacks %q:\n%s", want, r.stdout)
		}
	}
	again := sessionsJSONOf(t, ws)
	if len(again) != 2 || !again[0].Current || again[0].Title != "list team" || again[1].Title != "say hello" {
		t.Fatalf("choosing 2 did not bring back %q as the current conversation: %+v", list[1].Title, again)
	}

	r = runBin(t, ws, nil, "q\n", "chat", "--demo", "--plain", "--resume")
	mustSucceed(t, r, "chat --resume, q")
	if !strings.Contains(r.stderr, "no conversation chosen") || strings.Contains(r.stdout, "lead> ") {
		t.Errorf("q: want nothing opened; stdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}
	if after := sessionsJSONOf(t, ws); len(after) != 2 || after[0].Title != "list team" {
		t.Errorf("q changed the sessions: %+v", after)
	}
}

// While another process runs the team, `chat --resume` says so at once,
// not after asking which conversation to open.
func TestChatResumeRefusesARunningTeamBeforeAsking(t *testing.T) {
	ws := t.TempDir()
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "list team"), "first run")
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "say hello"), "second run")
	lc := startLineChat(t, ws, nil, "chat", "--demo", "--resume", "current")
	lc.waitFor("lead> ", 1)

	r := runBin(t, ws, nil, "1\n", "chat", "--demo", "--plain", "--resume")
	if r.code == 0 || !strings.Contains(r.stderr, "is already running the team in this workspace") {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "say hello") || strings.Contains(r.stdout, "current") {
		t.Fatalf("the conversations were offered before the refusal:\n%s", r.stdout)
	}
	lc.stdin.Close()
	lc.exit()
}

// The same on a NATS store: while a run holds the team's owner lease,
// chat --resume is refused before it offers the conversations.
func TestChatResumeRefusesATeamRunningOnNATSBeforeAsking(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	s := startServe(t, t.TempDir(), []string{"XDG_STATE_HOME=" + state}, "--listen", "127.0.0.1:0", "--data", t.TempDir())
	ws := t.TempDir()
	client := []string{"AGENTTEAM_STORE=" + s.url + "/alpha", "XDG_STATE_HOME=" + state}
	mustSucceed(t, runBin(t, ws, client, "", "run", "--demo", "list team"), "first run")
	mustSucceed(t, runBin(t, ws, client, "", "run", "--demo", "say hello"), "second run")

	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "late", Delay: time.Minute}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := exec.CommandContext(ctx, binary(t), "run", "--sandbox", "off", "a long task")
	c.Dir = ws
	c.Env = append(append(cleanEnv(), fakeEnv(srv)...), client...)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); _ = c.Wait() }()
	testkit.Eventually(t, 60*time.Second, "the run's first model call", func() bool { return srv.InFlight() > 0 })

	r := runBin(t, ws, client, "1\n", "chat", "--demo", "--plain", "--resume")
	if r.code == 0 || !strings.Contains(r.stderr, "is already running team alpha") {
		t.Fatalf("exit %d; stderr:\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "say hello") || strings.Contains(r.stdout, "current") {
		t.Fatalf("the conversations were offered before the refusal:\n%s", r.stdout)
	}
}
