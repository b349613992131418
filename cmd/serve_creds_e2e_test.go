package cmd

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/testutil/testpki"
)

// Plain `agentteam serve` makes its clients' credentials at its first
// start, in its user's state directory (0700, the file 0600) and says
// where; run and team of the same user on this host find them with no
// flag; a client without them is refused in one sentence within seconds;
// a second start keeps them.
func TestServeMakesCredentialsItsUsersClientsFind(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	// A state directory others may enter is closed to them.
	if err := os.MkdirAll(filepath.Join(state, "agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"XDG_STATE_HOME=" + state}
	data := t.TempDir()
	s := startServe(t, t.TempDir(), env, "--listen", "127.0.0.1:0", "--data", data)
	creds := filepath.Join(state, "agentteam", "nats.creds")
	worker := filepath.Join(state, "agentteam", "nats.worker.creds")
	person := filepath.Join(state, "agentteam", "nats.person.creds")
	s.waitLine(t, regexp.MustCompile(`credentials of every team for the lead \(run, chat\): `+regexp.QuoteMeta(creds)+`$`), 10*time.Second)
	s.waitLine(t, regexp.MustCompile(`credentials of every team for workers \(agentteam worker\): `+regexp.QuoteMeta(worker)+`$`), 10*time.Second)
	s.waitLine(t, regexp.MustCompile(`credentials of every team for a person's commands \(send, approve, deny, inbox…\): `+regexp.QuoteMeta(person)+`$`), 10*time.Second)
	s.waitLine(t, regexp.MustCompile(`on another host, copy the file of its role there \(chmod 600: a worker host the worker's\) and set AGENTTEAM_NATS_CREDS`), 10*time.Second)
	for path, want := range map[string]os.FileMode{filepath.Dir(creds): 0o700, creds: 0o600, worker: 0o600, person: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Fatalf("%s: %v, %v; want mode %04o", path, fi.Mode(), err, want)
		}
	}
	seed, err := os.ReadFile(creds)
	if err != nil {
		t.Fatal(err)
	}

	client := append([]string{"AGENTTEAM_STORE=" + s.url + "/alpha"}, env...)
	mustSucceed(t, runBin(t, t.TempDir(), client, "", "run", "--demo", "spawn bob as writer to write hi"), "run with no credentials given")
	if members := teamJSON(t, t.TempDir(), client); len(members) != 1 || members[0].Name != "bob" {
		t.Fatalf("team --json with no credentials given: %+v", members)
	}
	// A person's command takes the person's file: it sends as user, and
	// under another name is refused in one sentence.
	mustSucceed(t, quick(t, t.TempDir(), client, "send", "--to", "bob", "from the person"), "send as user")
	as := quick(t, t.TempDir(), client, "send", "--from", "dana", "--to", "lead", "from dana")
	if as.code == 0 || !strings.Contains(as.stderr, "these credentials may not send as dana") || strings.Count(strings.TrimSpace(as.stderr), "\n") != 0 {
		t.Fatalf("send --from dana with the person's credentials: exit %d\n%s", as.code, as.stderr)
	}
	r := quick(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + s.url + "/alpha", "XDG_STATE_HOME=" + t.TempDir()}, "team")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "asks for credentials") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("team without the credentials: exit %d\n%s", r.code, r.stderr)
	}

	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for range s.lines {
	}
	_ = s.cmd.Wait()
	s = startServe(t, t.TempDir(), env, "--listen", "127.0.0.1:0", "--data", data)
	if again, err := os.ReadFile(creds); err != nil || !bytes.Equal(again, seed) {
		t.Fatalf("a second start changed the credentials (%v)", err)
	}
	client[0] = "AGENTTEAM_STORE=" + s.url + "/alpha"
	if members := teamJSON(t, t.TempDir(), client); len(members) != 1 || members[0].Name != "bob" {
		t.Fatalf("team --json after a restart: %+v", members)
	}
}

// Another user of the host (uid 65534) reaches nothing of a plain serve:
// not with its own state directory, nor pointed at the serve's state
// directory or credentials file, which its modes keep from it. Before,
// it read the team's inboxes.
func TestAnotherUserCannotReachAPlainServe(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: cannot run a client as another user (uid 65534)")
	}
	const nobody = 65534
	// Every directory above the state directory others may enter: only
	// the modes serve gives keep the credentials from nobody.
	base, err := os.MkdirTemp("", "agentteam-serve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(base, "state")
	s := startServe(t, t.TempDir(), []string{"XDG_STATE_HOME=" + state}, "--listen", "127.0.0.1:0", "--data", t.TempDir())
	store := "AGENTTEAM_STORE=" + s.url + "/alpha"
	mustSucceed(t, quick(t, t.TempDir(), []string{store, "XDG_STATE_HOME=" + state}, "send", "--to", "lead", "the owner's secret"), "send as the owner")

	bin, home := filepath.Join(base, "agentteam"), filepath.Join(base, "home")
	copyFile(t, binary(t), bin, 0o755)
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	creds := filepath.Join(state, "agentteam", "nats.creds")
	for _, tc := range []struct {
		name string
		env  []string
		says string
	}{
		{"its own state directory", nil, "asks for credentials"},
		{"the serve's state directory", []string{"XDG_STATE_HOME=" + state}, "asks for credentials"},
		{"the serve's credentials file", []string{"AGENTTEAM_NATS_CREDS=" + creds}, "permission denied"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		c := exec.CommandContext(ctx, bin, "inbox", "lead")
		c.Dir = home
		c.Env = append(append(cleanEnv(), "HOME="+home, store, "GORACE=atexit_sleep_ms=0 halt_on_error=1"), tc.env...)
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		var stdout, stderr bytes.Buffer
		c.Stdout, c.Stderr = &stdout, &stderr
		err := c.Run()
		late := ctx.Err()
		cancel()
		if err == nil || late != nil || strings.Contains(stdout.String(), "secret") ||
			!strings.Contains(stderr.String(), tc.says) || strings.Count(strings.TrimSpace(stderr.String()), "\n") != 0 {
			t.Errorf("uid %d with %s: %v\nstdout %s\nstderr %s", nobody, tc.name, err, stdout.String(), stderr.String())
		}
	}
}

// serve --team alpha --team beta makes one credential per team, each its
// own account: alpha's client finds alpha's file with no flag, and
// beta's file does not reach alpha.
func TestServeMakesACredentialPerTeam(t *testing.T) {
	state := t.TempDir()
	env := []string{"XDG_STATE_HOME=" + state}
	s := startServe(t, t.TempDir(), env, "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--team", "alpha", "--team", "beta")
	beta := filepath.Join(state, "agentteam", "nats-beta.creds")
	s.waitLine(t, regexp.MustCompile(`credentials of team beta for the lead \(run, chat\): `+regexp.QuoteMeta(beta)+`$`), 10*time.Second)
	s.waitLine(t, regexp.MustCompile(`credentials of team beta for workers \(agentteam worker\): `+
		regexp.QuoteMeta(filepath.Join(state, "agentteam", "nats-beta.worker.creds"))+`$`), 10*time.Second)
	alpha := append([]string{"AGENTTEAM_STORE=" + s.url + "/alpha"}, env...)
	mustSucceed(t, quick(t, t.TempDir(), alpha, "send", "--to", "lead", "alpha's secret"), "send with alpha's file found")
	r := quick(t, t.TempDir(), append(alpha, "AGENTTEAM_NATS_CREDS="+beta), "inbox", "lead")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "are team beta's: they do not reach team alpha") || strings.Contains(r.stdout, "secret") {
		t.Fatalf("inbox of alpha with beta's credentials: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A team serve made no credential for: the one of every team is not there.
	r = quick(t, t.TempDir(), append([]string{"AGENTTEAM_STORE=" + s.url + "/gamma"}, env...), "inbox", "lead")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "asks for credentials") {
		t.Fatalf("inbox of gamma: exit %d\n%s", r.code, r.stderr)
	}
}

// What serve tells a client on another host works: with TLS, a copy of
// the credentials file (0600) in AGENTTEAM_NATS_CREDS and the CA in
// AGENTTEAM_NATS_CA, from a state directory of its own.
func TestAnotherHostUsesACopyOfServesCredentials(t *testing.T) {
	pki := testpki.New(t)
	state := t.TempDir()
	s := startServe(t, t.TempDir(), []string{"XDG_STATE_HOME=" + state}, "--listen", "127.0.0.1:0", "--data", t.TempDir(),
		"--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey)
	s.waitLine(t, regexp.MustCompile(`set AGENTTEAM_NATS_CREDS to it, and AGENTTEAM_NATS_CA to the CA of its certificate`), 10*time.Second)
	copied := filepath.Join(t.TempDir(), "team.creds")
	copyFile(t, filepath.Join(state, "agentteam", "nats.creds"), copied, 0o600)
	hostB := []string{"AGENTTEAM_STORE=" + strings.Replace(s.url, "tls://", "nats://", 1) + "/alpha", "XDG_STATE_HOME=" + t.TempDir(),
		"AGENTTEAM_NATS_CREDS=" + copied, "AGENTTEAM_NATS_CA=" + pki.CA}
	mustSucceed(t, runBin(t, t.TempDir(), hostB, "", "run", "--demo", "spawn bob as writer to write hi"), "run from another host")
	if members := teamJSON(t, t.TempDir(), hostB); len(members) != 1 || members[0].Name != "bob" {
		t.Fatalf("team --json from another host: %+v", members)
	}
}

// serve --insecure makes no credentials, says what that means, and takes
// a client without any.
func TestServeInsecureAsksNoCredentialsAndSaysSo(t *testing.T) {
	state := t.TempDir()
	s := startServe(t, t.TempDir(), []string{"XDG_STATE_HOME=" + state}, "--listen", "127.0.0.1:0", "--data", t.TempDir(), "--insecure")
	s.waitLine(t, regexp.MustCompile(`warning: 127\.0\.0\.1:0 asks no credentials \(--insecure\): any user of this host reads and writes every team`), 10*time.Second)
	if _, err := os.Stat(filepath.Join(state, "agentteam", "nats.creds")); !os.IsNotExist(err) {
		t.Fatalf("serve --insecure made credentials: %v", err)
	}
	mustSucceed(t, quick(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + s.url + "/alpha", "XDG_STATE_HOME=" + t.TempDir()}, "send", "--to", "lead", "hi"), "send without credentials")
}
