//go:build linux

package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testfs"
)

// everyLineParses checks that each complete line of a JSONL file is JSON.
func everyLineParses(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, _ := os.ReadFile(path)
	complete := bytes.LastIndexByte(data, '\n') + 1
	sc := bufio.NewScanner(bytes.NewReader(data[:complete]))
	sc.Buffer(nil, 8<<20)
	n := 0
	for sc.Scan() {
		if !json.Valid(sc.Bytes()) {
			t.Errorf("%s: line %d is not JSON: %.120q", path, n+1, sc.Text())
		}
		n++
	}
	return n
}

// TestFullDiskEndsTheRunWithOneSentence: a teammate's command fills the
// disk. The run ends by itself, exit 1, with one sentence naming the full
// disk and the file; nothing written before is lost; a resume on the still
// full disk says so too; once space is freed the resume finishes the work.
func TestFullDiskEndsTheRunWithOneSentence(t *testing.T) {
	ws := filepath.Join(testfs.SmallDisk(t, "2m", nil), "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	script := func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		switch c.Agent {
		case "alice":
			if !called(msgs, "bash") {
				return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"head -c 4000000 /dev/zero > big.bin; echo wrote"}`)}}
			}
			return fakellm.Reply{Content: "alice: the data file is written"}
		}
		if !called(msgs, "spawn_teammate") {
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the data file"}`)}}
		}
		return fakellm.Reply{Content: "lead: waiting for alice"}
	}
	srv := fakellm.New(script)
	defer srv.Close()

	r := runBin(t, ws, fakeEnv(srv), "", "run", "make the data file")
	for _, bad := range []string{"panic", "runtime error", "goroutine "} {
		if strings.Contains(r.stderr, bad) {
			t.Fatalf("the run printed %q:\n%s", bad, r.stderr)
		}
	}
	t.Logf("first run:\n%s", r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	last := lines[len(lines)-1]
	if r.code != 1 || !strings.HasPrefix(last, "agentteam: no space left on device while writing ") || !strings.Contains(last, ".agentteam") {
		t.Fatalf("exit %d, last line %q; want exit 1 and one sentence naming the full disk and the file\n%s", r.code, last, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("a final answer was printed: %q", r.stdout)
	}
	// Nothing already written is lost: the registry is whole, every
	// complete line of every log is JSON, and the prompt is in the lead's inbox or session.
	if cfg := readRegistry(t, ws); len(cfg.Teammates) != 1 || cfg.Teammates[0].Name != "alice" {
		t.Fatalf("registry: %+v", cfg)
	}
	for _, p := range []string{"inbox/lead.jsonl", "inbox/alice.jsonl", "sessions/lead.jsonl", "sessions/alice.jsonl", "events.jsonl"} {
		everyLineParses(t, state(ws, p))
	}
	if !strings.Contains(sessionText(t, state(ws, "sessions", "lead.jsonl")), "make the data file") {
		t.Error("the lead's session lost the prompt")
	}

	// The disk is still full: resume says so, in one sentence.
	r = runBin(t, ws, fakeEnv(srv), "", "run", "--resume", "go on")
	if r.code == 0 || !strings.Contains(r.stderr, "no space left on device") || strings.Contains(r.stderr, "runtime error") || strings.Contains(r.stderr, "panic") {
		t.Fatalf("resume on a full disk: exit %d\n%s", r.code, r.stderr)
	}

	// Space freed: the resumed run finishes.
	if err := os.Remove(filepath.Join(ws, "big.bin")); err != nil {
		t.Fatal(err)
	}
	srv2 := fakellm.New(func(c fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: c.Agent + ": done"} })
	defer srv2.Close()
	r = runBin(t, ws, fakeEnv(srv2), "", "run", "--resume", "go on")
	if r.code != 0 {
		t.Fatalf("resume after freeing space: exit %d\n%s", r.code, r.stderr)
	}
	noViolations(t, srv2)
}
