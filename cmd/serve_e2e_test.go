package cmd

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// server is `agentteam serve` running as its own process.
type server struct {
	cmd   *exec.Cmd
	lines chan string // its stderr, line by line; closed when it exits
	url   string
}

var listening = regexp.MustCompile(`listening on ((?:nats|tls)://\S+)`)

// startServe runs the binary's serve in dir and waits (bounded) for the
// line saying where it listens. The process is killed when t ends if it
// is still running.
func startServe(t *testing.T, dir string, env []string, args ...string) *server {
	t.Helper()
	c := exec.Command(binary(t), append([]string{"serve"}, args...)...)
	c.Dir = dir
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), env...)
	stderr, err := c.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: c, lines: make(chan string, 100)}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if c.ProcessState == nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	s.url = s.waitLine(t, listening, 90*time.Second)[1]
	return s
}

// serveCreds are the credentials a serve of the tests made for every
// team, in the state directory of their HOME.
func serveCreds(t *testing.T) natsconn.ConnectOptions {
	t.Helper()
	dir, err := natsconn.CredsDir(func(k string) string {
		if k == "HOME" {
			return testHome
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	o, err := natsconn.ReadCredsFile(natsconn.CredsFile(dir, ""))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// waitLine returns the submatches of the first stderr line matching re.
func (s *server) waitLine(t *testing.T, re *regexp.Regexp, bound time.Duration) []string {
	t.Helper()
	timeout := time.After(bound)
	var seen []string
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				t.Fatalf("serve exited before saying %q; stderr:\n%s", re, strings.Join(seen, "\n"))
			}
			seen = append(seen, l)
			if m := re.FindStringSubmatch(l); m != nil {
				return m
			}
		case <-timeout:
			t.Fatalf("serve did not say %q within %s; stderr:\n%s", re, bound, strings.Join(seen, "\n"))
		}
	}
}

// serve starts through the binary, keeps its data under .agentteam/nats,
// takes a team's messages, refuses a second serve on its port with one
// sentence, and ends cleanly on SIGTERM.
func TestServeRunsAndASecondOnTheSamePortFails(t *testing.T) {
	dir := t.TempDir()
	s := startServe(t, dir, nil, "--listen", "127.0.0.1:0")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, s.url, serveCreds(t))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	mb, err := natsstore.OpenMailbox(ctx, nc, "e2e")
	if err != nil {
		t.Fatal(err)
	}
	sent, err := mb.Append(ctx, "lead", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "through serve"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := mb.ReadUnread(ctx, "lead")
	if err != nil || len(b.Messages) != 1 || b.Messages[0].ID != sent.ID {
		t.Fatalf("read back %+v, %v", b.Messages, err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".agentteam", "nats", "jetstream")); err != nil {
		t.Fatalf("no JetStream data under .agentteam/nats: %v", err)
	}

	addr := strings.TrimPrefix(s.url, "nats://")
	r := runBin(t, t.TempDir(), nil, "", "serve", "--listen", addr)
	if r.code != exit.Failure || !strings.Contains(r.stderr, "the listen address "+addr+" is taken by another program") ||
		strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("second serve: exit %d, stderr %q; want exit 1 and one sentence naming the taken port", r.code, r.stderr)
	}

	nc.Close()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitLine(t, regexp.MustCompile(`stopping`), 30*time.Second)
	for range s.lines {
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
}

// With a users file, serve asks each client for its team's credentials:
// alice of alpha works in alpha, nobody gets in without credentials, and
// alice cannot open beta's inboxes.
func TestServeWithUsersAsksForCredentials(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	if err := os.WriteFile(users, []byte("# team user password\nalpha alice alpha-secret\nbeta bob beta-secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, dir, []string{"AGENTTEAM_NATS_USERS=" + users}, "--listen", "127.0.0.1:0")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := map[string]string{natsconn.EnvUser: "alice", natsconn.EnvPassword: "alpha-secret"}
	o, err := natsconn.ConnectOptionsFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	nc, err := natsconn.Connect(ctx, s.url, o)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	mb, err := natsstore.OpenMailbox(ctx, nc, "alpha")
	if err != nil {
		t.Fatalf("alice opens alpha's inboxes: %v", err)
	}
	if _, err := mb.Append(ctx, "lead", inbox.Message{Type: inbox.TypeMessage, From: "alice", Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	if _, err := natsstore.OpenMailbox(short, nc, "beta"); err == nil {
		t.Fatal("alice opened beta's inboxes")
	}
	if _, err := natsconn.Connect(ctx, s.url, natsconn.ConnectOptions{}); err == nil || !strings.Contains(err.Error(), "asks for credentials") {
		t.Fatalf("without credentials: %v", err)
	}
}

// What serve refuses before it starts, each in one sentence: a users file
// others may read, a data directory that is a file, a route without a
// cluster address, TLS without its key, other hosts without TLS.
func TestServeRefusesBadSetupsWithASentence(t *testing.T) {
	dir := t.TempDir()
	users := filepath.Join(dir, "users")
	if err := os.WriteFile(users, []byte("alpha alice s3cret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--users", users}, "chmod 600"},
		{[]string{"--data", file}, "is unusable"},
		{[]string{"--routes", "nats://127.0.0.1:6222"}, "need --cluster"},
		{[]string{"--tls-cert", file}, "needs both --tls-cert and --tls-key"},
		{[]string{"--listen", "0.0.0.0:0"}, "reachable from other hosts: give --tls-cert and --tls-key"},
	} {
		r := runBin(t, dir, nil, "", append([]string{"serve", "--listen", "127.0.0.1:0"}, tc.args...)...)
		if r.code != exit.Failure || !strings.Contains(r.stderr, tc.says) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("serve %q: exit %d, stderr %q; want one sentence saying %q", tc.args, r.code, r.stderr, tc.says)
		}
		if strings.Contains(r.stderr, "s3cret") {
			t.Errorf("serve %q printed a password: %q", tc.args, r.stderr)
		}
	}
}
