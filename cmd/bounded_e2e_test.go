package cmd

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/fakellm"
)

// A model that sends a tool call past the bound on arguments: nothing of it
// runs or is stored, the model is told the bound, and its next, smaller
// call runs. No file, session line or later request carries the big one.
func TestAToolCallPastItsBoundIsCutAndTheModelIsTold(t *testing.T) {
	huge := strings.Repeat("x", 3<<20)
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"big.txt","content":"`+huge+`"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"small.txt","content":"in parts\n"}`)}},
			{Content: "wrote it in parts"},
		},
	}, nil)
	srv := fakellm.New(script, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	ws := t.TempDir()

	r := runBin(t, ws, fakeEnv(srv), "", "run", "write a big file")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if strings.TrimSpace(r.stdout) != "wrote it in parts" {
		t.Errorf("stdout %q", r.stdout)
	}
	if !strings.Contains(r.stderr, "passed agentteam's bound of 1 MiB") {
		t.Errorf("stderr does not say the reply was cut at its bound:\n%s", r.stderr)
	}
	if _, err := os.Stat(filepath.Join(ws, "big.txt")); !os.IsNotExist(err) {
		t.Errorf("the cut call ran: big.txt %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "small.txt")); err != nil {
		t.Errorf("the smaller call after it did not run: %v", err)
	}
	reqs := srv.Requests("lead")
	if len(reqs) != 3 {
		t.Fatalf("%d requests of the lead, want 3", len(reqs))
	}
	var told bool
	for _, m := range reqs[1].Messages {
		if len(m.Content) > 64<<10 || (len(m.ToolCalls) > 0 && len(m.ToolCalls[0].Function.Arguments) > 64<<10) {
			t.Fatalf("the request after the cut carries %d bytes of a message", len(m.Content)+len(m.ToolCalls[0].Function.Arguments))
		}
		told = told || (m.Role == "tool" && strings.Contains(m.Content, "not run") && strings.Contains(m.Content, "1 MiB"))
	}
	if !told {
		t.Error("the model was not told why its call did not run")
	}
	// No state file holds a line anywhere near the call's size.
	filepath.Walk(filepath.Join(ws, ".agentteam"), func(path string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if n := len(sc.Bytes()); n > 256<<10 {
				t.Errorf("%s has a line of %d bytes", path, n)
			}
		}
		return nil
	})
}
