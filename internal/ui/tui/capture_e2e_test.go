package tui

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The capture of the TUI in docs/chat.md is this test's: it drives the
// offline demo in tmux at 120×32 and compares the screen with the doc's,
// numbers and the workspace's path aside. AGENTTEAM_UPDATE_DOCS=1 writes
// the new capture into the doc instead, so it cannot go stale.
func TestTheDocsCaptureIsTheTUIsInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	ws := filepath.Join(t.TempDir(), "hello")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	s := startTmux(t, ws)
	s.run("resize-window", "-t", "e2e", "-x", "120", "-y", "32")
	s.typeLine("HOME=" + t.TempDir() + " " + bin + " chat --demo")
	s.waitFor("the TUI", contains("Team", "Messages"))
	s.typeLine("spawn alice as programmer to write hello.txt: hi")
	s.waitFor("alice's ask", contains("alice asks to run write_file hello.txt", "1 y allow once"))
	s.run("send-keys", "-t", "e2e", "y")
	s.waitFor("alice's work reported", contains("alice: done — ready — wrote hello.txt"))
	s.typeLine("/send alice please add a test")
	screen := s.waitFor("alice's answer and the lead's", func(screen string) bool {
		return strings.Count(screen, "received from user: please add a test") >= 2 && strings.Contains(screen, "lead · idle")
	})
	got := captureOf(screen, ws)

	doc := filepath.Join("..", "..", "..", "docs", "chat.md")
	data, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, captureStart)
	end := strings.Index(text[start+len(captureStart):], "\n```\n")
	if start < 0 || end < 0 {
		t.Fatalf("%s has no capture block after %q", doc, captureStart)
	}
	end += start + len(captureStart)
	if os.Getenv("AGENTTEAM_UPDATE_DOCS") != "" {
		text = text[:start+len(captureStart)] + got + text[end:]
		if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want := text[start+len(captureStart) : end]; volatile(want) != volatile(got) {
		t.Fatalf("the TUI no longer looks as docs/chat.md shows it; run AGENTTEAM_UPDATE_DOCS=1 go test -run %s ./internal/ui/tui/ and look at the diff.\nnow:\n%s", t.Name(), got)
	}
}

// captureStart opens the capture's block in docs/chat.md.
const captureStart = "<!-- capture: TestTheDocsCaptureIsTheTUIsInTmux -->\n```text\n"

// captureOf is a screen as the doc shows it: lines trimmed on the right,
// the workspace shown as /tmp/hello, no blank lines at the end.
func captureOf(screen, ws string) string {
	var lines []string
	for _, l := range strings.Split(screen, "\n") {
		lines = append(lines, strings.TrimRight(strings.ReplaceAll(l, ws, "/tmp/hello"), " "))
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// volatile blanks what changes from run to run: numbers (token counts,
// times) and the padding around them.
func volatile(s string) string {
	s = regexp.MustCompile(`[0-9]+(\.[0-9]+)?k?`).ReplaceAllString(s, "#")
	return regexp.MustCompile(` +`).ReplaceAllString(s, " ")
}
