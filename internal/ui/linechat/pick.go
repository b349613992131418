package linechat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/muesli/cancelreader"

	"github.com/agentteam/agentteam/team/sessions"
)

// maxPickLine bounds the answer to the session picker.
const maxPickLine = 1024

// PickSession is `chat --resume` in lines: the sessions numbered, the
// current one first as team.ListSessions gives them, and a prompt for a
// number (enter takes the first, as the TUI's picker does), a session id,
// or q to leave. A wrong answer is said and asked again. It returns the id
// chosen, or "" when the person left: q, the end of the input, or ctx
// ended (ctrl+c; a reader that is not an *os.File cannot be interrupted
// and ends only with its answer). echo writes the answer after the
// prompt, for an input that no terminal echoes. It reads one byte at a
// time up to the end of the answer's line, so the lines after it are left
// for the chat.
func PickSession(ctx context.Context, in io.Reader, out io.Writer, list []sessions.Info, echo bool) (string, error) {
	if len(list) == 0 {
		return "", nil
	}
	w := &printer{w: out}
	w.line("Resume which conversation with the lead?")
	for i, s := range list {
		id := s.ID
		if s.Current {
			id = "current"
		}
		w.line(fmt.Sprintf("%3d  %-19s  %s  %4d msgs  %s", i+1, id, s.Time.Local().Format("2006-01-02 15:04"), s.Messages, s.Title))
	}
	r := cancellable(in)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // ctrl+c (ctx) ends a read that waits for the person
		defer wg.Done()
		select {
		case <-ctx.Done():
			r.Cancel()
		case <-done:
		}
	}()
	defer func() {
		close(done)
		wg.Wait()
		r.Close()
	}()
	ask := fmt.Sprintf("number 1-%d, or an id (enter: 1, q leaves)> ", len(list))
	for {
		io.WriteString(out, ask)
		answer, err := readLine(r)
		if echo && err == nil {
			w.line(answer)
		}
		switch {
		case ctx.Err() != nil, errors.Is(err, cancelreader.ErrCanceled):
			w.line("")
			return "", nil
		case errors.Is(err, io.EOF):
			w.line("")
			return "", nil
		case err != nil:
			w.line("")
			return "", fmt.Errorf("the answer to the session picker cannot be read: %w", err)
		}
		answer = strings.TrimSpace(answer)
		if answer == "q" || answer == "/quit" {
			return "", nil
		}
		if id, ok := choice(list, answer); ok {
			return id, nil
		}
		w.line(fmt.Sprintf("%q is not one of them: type a number from 1 to %d, an id from the list, or q", clean(answer), len(list)))
	}
}

// choice is the session an answer names: its number in the list (empty
// is the first), or its id ("current" for the current one).
func choice(list []sessions.Info, answer string) (string, bool) {
	if answer == "" {
		return list[0].ID, true
	}
	if n, err := strconv.Atoi(answer); err == nil {
		if n >= 1 && n <= len(list) {
			return list[n-1].ID, true
		}
		return "", false
	}
	for _, s := range list {
		if s.ID == answer {
			return s.ID, true
		}
	}
	return "", false
}

// readLine reads up to and including a newline, one byte at a time (no
// byte after it is taken from r), without the newline or a CR before it.
// A line longer than maxPickLine is an error; so is the end of the input
// before any byte (io.EOF), while a last line without a newline counts.
func readLine(r io.Reader) (string, error) {
	var b []byte
	var one [1]byte
	for {
		n, err := r.Read(one[:])
		if n == 1 {
			if one[0] == '\n' {
				return strings.TrimSuffix(string(b), "\r"), nil
			}
			if len(b) == maxPickLine {
				return "", fmt.Errorf("a line of more than %d bytes", maxPickLine)
			}
			b = append(b, one[0])
			continue
		}
		if errors.Is(err, io.EOF) && len(b) > 0 {
			return string(b), nil
		}
		if err != nil {
			return "", err
		}
	}
}
