package linechat

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/team/sessions"
)

func pickList() []sessions.Info {
	at := time.Date(2026, 11, 23, 15, 4, 0, 0, time.UTC)
	return []sessions.Info{
		{ID: sessions.CurrentID, Title: "list team", Time: at, Messages: 4, Current: true},
		{ID: "20261123T150000.000", Title: "fix the \x1b[2Jparser", Time: at.Add(-time.Hour), Messages: 12},
		{ID: "20261122T090000.000", Title: "write docs", Time: at.Add(-30 * time.Hour), Messages: 7},
	}
}

// TestPickSessionAsksUntilAnAnswerNamesOne: wrong answers are said and
// asked again; the number chosen gives its id; the lines after the answer
// are left in the input for the chat; a title's escape sequence is shown
// as text.
func TestPickSessionAsksUntilAnAnswerNamesOne(t *testing.T) {
	list := pickList()
	in := strings.NewReader("x\n7\n 2 \nhello lead\n")
	var out bytes.Buffer
	id, err := PickSession(context.Background(), in, &out, list, true)
	if err != nil || id != list[1].ID {
		t.Fatalf("PickSession = %q, %v; want %q", id, err, list[1].ID)
	}
	rest, _ := io.ReadAll(in)
	if string(rest) != "hello lead\n" {
		t.Errorf("the picker took input meant for the chat: %q left", rest)
	}
	got := out.String()
	for _, want := range []string{
		"Resume which conversation with the lead?",
		"  1  current ", "list team",
		"  2  " + list[1].ID, "12 msgs",
		"  3  " + list[2].ID, "write docs",
		`"x" is not one of them`, `"7" is not one of them`,
		"number 1-3, or an id (enter: 1, q leaves)> x\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the picker's output lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsRune(got, '\x1b') || !strings.Contains(got, "fix the ?[2Jparser") {
		t.Errorf("a title's escape sequence reached the output raw:\n%q", got)
	}
}

func TestPickSessionAnswers(t *testing.T) {
	list := pickList()
	for _, c := range []struct{ in, want string }{
		{"\n", sessions.CurrentID}, // enter: the first, as in the TUI
		{"3\n", list[2].ID},
		{"3", list[2].ID}, // a last line without a newline
		{list[2].ID + "\r\n", list[2].ID},
		{"current\n", sessions.CurrentID},
		{"q\n", ""},
		{"0\n-1\nq\n", ""},
		{"", ""},        // the end of the input: nothing chosen
		{"bogus\n", ""}, // then the end of the input
	} {
		id, err := PickSession(context.Background(), strings.NewReader(c.in), io.Discard, list, false)
		if err != nil || id != c.want {
			t.Errorf("answer %q: PickSession = %q, %v; want %q", c.in, id, err, c.want)
		}
	}
	long := strings.Repeat("9", maxPickLine+1) + "\n1\n"
	if id, err := PickSession(context.Background(), strings.NewReader(long), io.Discard, list, false); err == nil || id != "" {
		t.Errorf("a %d-byte answer: PickSession = %q, %v; want an error", len(long), id, err)
	}
}

// TestPickSessionEndsWithItsContext: ctrl+c (the context) ends a picker
// waiting for an answer on a pipe nobody writes to; nothing is chosen.
func TestPickSessionEndsWithItsContext(t *testing.T) {
	in, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	defer inW.Close()
	outR, out, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer outR.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type res struct {
		id  string
		err error
	}
	done := make(chan res, 1)
	go func() {
		id, err := PickSession(ctx, in, out, pickList(), false)
		out.Close()
		done <- res{id, err}
	}()
	// Wait for the prompt: the picker then waits in its read.
	var seen []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(seen, []byte("q leaves)> ")) {
		n, err := outR.Read(buf)
		if err != nil {
			t.Fatalf("no prompt before %v:\n%s", err, seen)
		}
		seen = append(seen, buf[:n]...)
	}
	cancel()
	select {
	case got := <-done:
		if got.id != "" || got.err != nil {
			t.Fatalf("PickSession after ctrl+c = %q, %v; want nothing chosen", got.id, got.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the picker still waits for an answer 30 s after its context ended")
	}
}
