package inbox

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The test binary doubles as a helper process: with childEnv set, TestMain
// runs a child mode instead of the tests, so tests can write from other PIDs.
const (
	childEnv  = "INBOX_TEST_CHILD"
	envDir    = "INBOX_TEST_DIR"
	envName   = "INBOX_TEST_NAME"
	envPrefix = "INBOX_TEST_PREFIX"
	envCount  = "INBOX_TEST_COUNT"
	envPad    = "INBOX_TEST_PAD"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		if err := runChild(mode); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runChild(mode string) error {
	count, _ := strconv.Atoi(os.Getenv(envCount))
	ctx := context.Background() // a child process of a test: nothing cancels it
	switch mode {
	case "send":
		// Wait at the gate so that all senders start together.
		if _, err := os.Stdin.Read(make([]byte, 1)); err != nil && err != io.EOF {
			return err
		}
		pad, _ := strconv.Atoi(os.Getenv(envPad))
		st := NewStore(os.Getenv(envDir))
		for n := range count {
			if _, err := st.Append(ctx, os.Getenv(envName), testMsg(content(os.Getenv(envPrefix), n, pad))); err != nil {
				return err
			}
		}
		return nil
	case "serve":
		// One Append per line read from stdin, until EOF.
		st := NewStore(os.Getenv(envDir))
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if _, err := st.Append(ctx, os.Getenv(envName), testMsg(sc.Text())); err != nil {
				return err
			}
		}
		return sc.Err()
	}
	return fmt.Errorf("unknown mode %q", mode)
}

// content is the identifiable text of message n from prefix, padded with a
// known pattern so that a torn or mixed line cannot pass for whole.
func content(prefix string, n, pad int) string {
	id := fmt.Sprintf("%s-%d", prefix, n)
	if pad == 0 {
		return id
	}
	return id + "|" + strings.Repeat(id[len(id)-1:], pad)
}

func testMsg(c string) Message {
	return Message{Type: TypeMessage, From: "alice", Content: c}
}

// child is a running helper process.
type child struct {
	label  string
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
}

func startChild(tb testing.TB, mode string, env ...string) *child {
	tb.Helper()
	c := &child{label: fmt.Sprint(mode, env), cmd: exec.Command(os.Args[0])}
	c.cmd.Env = append(append(os.Environ(), childEnv+"="+mode), env...)
	c.cmd.Stderr = &c.stderr
	var err error
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		tb.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			_ = c.cmd.Wait()
		}
	})
	return c
}

// wait closes the child's stdin and waits for a clean exit.
func (c *child) wait(tb testing.TB) {
	tb.Helper()
	_ = c.stdin.Close()
	if err := c.cmd.Wait(); err != nil {
		tb.Errorf("child %s: %v\n%s", c.label, err, c.stderr.String())
	}
}

func envs(kv ...string) []string {
	var out []string
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, kv[i]+"="+kv[i+1])
	}
	return out
}

// receive waits for one value on ch; the timeout only turns a hang into a failure.
func receive(tb testing.TB, ch <-chan struct{}, what string) {
	tb.Helper()
	select {
	case _, ok := <-ch:
		if !ok {
			tb.Fatalf("%s: channel closed", what)
		}
	case <-time.After(5 * time.Second):
		tb.Fatalf("%s: no wake within 5s", what)
	}
}
