//go:build linux

package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestNoTerminalQueryAtStart: Bubble Tea v1's package init asked the
// terminal for its background colour (OSC 11, then a cursor report) at
// every start of every command whose stdout is a terminal, and waited for
// the answer: five seconds, and the query's bytes on the screen, where the
// terminal does not answer. agentteam settles the background first
// (internal/ui/termbg), so a command on a terminal that never answers writes
// its output and no query.
func TestNoTerminalQueryAtStart(t *testing.T) {
	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, binary(t), "version")
	c.Dir = t.TempDir()
	c.Env = append(cleanEnv(), "TERM=xterm-256color", "COLORFGBG=", "GORACE=atexit_sleep_ms=0")
	c.Stdin, c.Stdout, c.Stderr = slave, slave, slave
	// The terminal must be the command's controlling terminal, with the
	// command in its foreground, as in a shell: else no query is tried.
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	read := make(chan []byte)
	go func() { // ends when the command has exited and closed the terminal (EIO)
		var buf bytes.Buffer
		b := make([]byte, 4096)
		for {
			n, err := master.Read(b)
			buf.Write(b[:n])
			if err != nil {
				read <- buf.Bytes()
				return
			}
		}
	}()
	werr := c.Wait()
	out := <-read
	if werr != nil {
		t.Fatalf("agentteam version on a terminal: %v\n%q", werr, out)
	}
	if !bytes.Contains(out, []byte("agentteam")) {
		t.Fatalf("no version on the terminal: %q", out)
	}
	for _, q := range []string{"\x1b]11;", "\x1b[6n"} {
		if bytes.Contains(out, []byte(q)) {
			t.Fatalf("agentteam version queried the terminal (%q) at start: %q", q, out)
		}
	}
}

// openPTY opens a pseudo-terminal pair; both ends are closed at the end of
// the test.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	fd := int(master.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock the terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("the terminal's number: %v", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open the terminal: %v", err)
	}
	t.Cleanup(func() { slave.Close() }) // closed already after a start: harmless
	return master, slave
}
