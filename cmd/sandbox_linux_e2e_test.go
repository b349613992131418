//go:build linux

package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/sys/sandbox"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// The attacks on the bash tool, through the binary with the fake
// model. Each runs with --sandbox required (so a machine that cannot
// sandbox fails them rather than passing them unconfined);
// AGENTTEAM_TEST_SANDBOX=off runs the same attacks without the sandbox, to
// see each of them succeed there.
func sandboxFlag() string {
	if m := os.Getenv("AGENTTEAM_TEST_SANDBOX"); m != "" {
		return m
	}
	return "required"
}

// needSandbox skips where this kernel cannot sandbox commands at all,
// saying why; in CI, whose kernel can, that is a failure.
func needSandbox(t *testing.T) {
	t.Helper()
	if err := sandbox.Check(context.Background(), true); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI's kernel sandboxes commands, but here: %v", err)
		}
		t.Skipf("this machine cannot sandbox commands: %v", err)
	}
}

// bashLead is a script in which the lead runs each command with bash, one
// a turn, then answers "lead: done".
func bashLead(commands ...string) fakellm.Script {
	return func(c fakellm.Call) fakellm.Reply {
		if n := countCalls(c.Req.Messages, "bash"); n < len(commands) {
			return useTool("bash", fmt.Sprintf(`{"command":%q}`, commands[n]))
		}
		return fakellm.Reply{Content: "lead: done"}
	}
}

func countCalls(msgs []openai.ChatCompletionMessage, tool string) int {
	n := 0
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == tool {
				n++
			}
		}
	}
	return n
}

// secrets are unique values for the model key and two other credentials.
type secrets struct{ key, github, aws string }

func newSecrets() secrets {
	n := rand.Int64()
	return secrets{fmt.Sprintf("sk-e2e-key-%d", n), fmt.Sprintf("ghp-e2e-token-%d", n), fmt.Sprintf("aws-e2e-secret-%d", n)}
}

func (s secrets) env(srv *fakellm.Server) []string {
	return []string{"OPENAI_API_KEY=" + s.key, "OPENAI_BASE_URL=" + srv.URL(), "AGENTTEAM_MODEL=fake-model",
		"GITHUB_TOKEN=" + s.github, "AWS_SECRET_ACCESS_KEY=" + s.aws}
}

// leakCommand prints everything a command could learn of agentteam's
// environment: its own, its parent's, and every process's it can see.
const leakCommand = `echo BEGIN; env; tr '\0' '\n' < /proc/$PPID/environ; cat /proc/*/environ | tr '\0' '\n'; echo; echo GH=$GITHUB_TOKEN AWS=$AWS_SECRET_ACCESS_KEY; echo END`

// whoCommand shows who a command runs as and tries what only root of its
// namespace could do: each "BROKE" is one it did.
const whoCommand = `echo "ids=$(id -u):$(id -g)"; touch made-by-command; echo "setgroups=$(cat /proc/self/setgroups)"; ` +
	`grep '^CapEff:' /proc/self/status; unshare -U true && echo BROKE-unshare; chroot / true && echo BROKE-chroot; ` +
	`mkdir -p mnt && mount -t tmpfs none mnt && echo BROKE-mount; echo WHO-END`

// checkWho fails unless the whoCommand, the lead's second call, ran as
// uid:gid (the person who ran agentteam) without any privilege, and the
// file it made in the workspace is theirs.
func checkWho(t *testing.T, ws string, uid, gid int) {
	t.Helper()
	results := toolResults(t, ws, "lead")
	if len(results) != 2 || !strings.Contains(results[1], "WHO-END") {
		t.Fatalf("the command did not run as planned: %q", results)
	}
	out := results[1]
	for _, want := range []string{fmt.Sprintf("ids=%d:%d\n", uid, gid), "setgroups=deny\n", "CapEff:\t0000000000000000\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("the command's result lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "BROKE") {
		t.Errorf("the command acted as root of its namespace:\n%s", out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(ws, "made-by-command"), &st); err != nil {
		t.Fatalf("the command's file: %v", err)
	}
	if int(st.Uid) != uid || int(st.Gid) != gid {
		t.Errorf("the command's file is owned by %d:%d, not %d:%d", st.Uid, st.Gid, uid, gid)
	}
}

// checkNoLeak fails if any secret is in the command's result or in any
// file of the workspace's state.
func checkNoLeak(t *testing.T, ws string, s secrets) {
	t.Helper()
	results := toolResults(t, ws, "lead")
	if len(results) < 1 || !strings.Contains(results[0], "BEGIN") || !strings.Contains(results[0], "PATH=") || !strings.Contains(results[0], "END") {
		t.Fatalf("the command did not run as planned: %q", results)
	}
	for _, v := range []string{s.key, s.github, s.aws} {
		if strings.Contains(results[0], v) {
			t.Errorf("the command read a secret (%s…):\n%s", v[:12], results[0])
		}
	}
	_ = filepath.WalkDir(state(ws), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, _ := os.ReadFile(p)
		for _, v := range []string{s.key, s.github, s.aws} {
			if bytes.Contains(data, []byte(v)) {
				t.Errorf("%s holds a secret (%s…)", p, v[:12])
			}
		}
		return nil
	})
}

func TestSandboxKeepsSecretsFromCommandsThroughTheBinary(t *testing.T) {
	needSandbox(t)
	s := newSecrets()
	srv := fakellm.New(bashLead(leakCommand, whoCommand), fakellm.WithAPIKey(s.key))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, s.env(srv), "", "run", "--sandbox", sandboxFlag(), "show me the environment")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	checkNoLeak(t, ws, s)
	checkWho(t, ws, os.Geteuid(), os.Getegid())

	// team says how the commands ran.
	r = runBin(t, ws, nil, "", "team")
	mustSucceed(t, r, "team")
	if want := "sandbox: " + wantState(); !strings.Contains(r.stderr, want) {
		t.Errorf("team does not say %q:\n%s", want, r.stderr)
	}
	r = runBin(t, ws, nil, "", "team", "--json")
	var out struct {
		Sandbox *struct {
			On    bool   `json:"on"`
			State string `json:"state"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Sandbox == nil || out.Sandbox.State != wantState() {
		t.Errorf("team --json sandbox = %+v (%v):\n%s", out.Sandbox, err, r.stdout)
	}
}

func wantState() string {
	if sandboxFlag() == "off" {
		return "off (--sandbox off)"
	}
	return "on"
}

// The same as a normal user: CI runs as root, so the test drops to nobody
// (uid 65534) itself.
func TestSandboxKeepsSecretsFromCommandsAsANormalUser(t *testing.T) {
	needSandbox(t)
	if os.Geteuid() != 0 {
		// Already a normal user: the test above is this test.
		t.Skip("not root: TestSandboxKeepsSecretsFromCommandsThroughTheBinary already runs as a normal user")
	}
	u := newSandboxUser(t, nobody)
	u.own(t)
	s := newSecrets()
	srv := fakellm.New(bashLead(leakCommand, whoCommand), fakellm.WithAPIKey(s.key))
	defer srv.Close()
	mustSucceed(t, u.run(t, s.env(srv), "run", "--sandbox", sandboxFlag(), "show me the environment"), "run as nobody")
	noViolations(t, srv)
	checkNoLeak(t, u.ws, s)
	checkWho(t, u.ws, nobody, nobody)
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// git runs the git CLI in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	c := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com"}, args...)...)
	c.Dir = dir
	if out, err := c.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// planEscapes are the commands that once wrote or deleted files
// through plan mode's read-only allowlist.
var planEscapes = []string{"uniq notes.txt out", "find . -fprint0 f", "file -C -m x", "git grep -O'rm' x"}

// A plan-mode teammate, before its plan is approved, runs the four escapes:
// nothing in the workspace changes.
func TestPlanModeEscapesWriteNothingThroughTheBinary(t *testing.T) {
	needSandbox(t)
	ws := t.TempDir()
	testWriteFile(t, filepath.Join(ws, "notes.txt"), "x\nx\ny\n")
	testWriteFile(t, filepath.Join(ws, "x"), "0 string x X-FILE\n") // a magic file for file -C
	git(t, ws, "init", "-q")
	git(t, ws, "add", "notes.txt", "x")
	git(t, ws, "commit", "-qm", "notes")
	before := snapshot(t, ws)

	script := func(c fakellm.Call) fakellm.Reply {
		msgs := c.Req.Messages
		if c.Agent == "alice" {
			if !called(msgs, "bash") {
				var calls []fakellm.ToolCall
				for _, cmd := range planEscapes {
					calls = append(calls, call("bash", fmt.Sprintf(`{"command":%q}`, cmd)))
				}
				return fakellm.Reply{ToolCalls: calls}
			}
			return fakellm.Reply{Content: "alice: tried"}
		}
		if !called(msgs, "spawn_teammate") {
			return useTool("spawn_teammate", `{"name":"alice","role":"planner","prompt":"look around","plan_mode":true}`)
		}
		return fakellm.Reply{Content: "lead: noted"}
	}
	srv := fakellm.New(script)
	defer srv.Close()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", sandboxFlag(), "plan first")
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	if got := len(toolResults(t, ws, "alice")); got != len(planEscapes) {
		t.Fatalf("alice ran %d commands, want %d", got, len(planEscapes))
	}
	if after := snapshot(t, ws); after != before {
		t.Fatalf("a plan-mode command changed the workspace:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// snapshot is every file under root but the team's own state, with its
// content: equal snapshots, unchanged tree.
func snapshot(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".agentteam" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, "%s %q\n", rel, data)
		} else {
			fmt.Fprintf(&b, "%s %s\n", rel, d.Type())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func testWriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Background children of a command, setsid ones too, do not outlive the run.
func TestNoBackgroundChildSurvivesTheRun(t *testing.T) {
	needSandbox(t)
	marker := fmt.Sprintf("1000.%d", rand.Int64N(1e12))
	t.Cleanup(func() { killMarked(marker) }) // a failing run must not leave them behind
	srv := fakellm.New(bashLead(
		"sleep "+marker+" & setsid sleep "+marker+" & (sleep "+marker+" >/dev/null 2>&1 &); echo started",
		"nohup setsid sleep "+marker+" >/dev/null 2>&1 & disown; echo again"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", sandboxFlag(), "start something")
	mustSucceed(t, r, "run")
	if res := toolResults(t, ws, "lead"); len(res) != 2 || !strings.Contains(res[0], "started") || !strings.Contains(res[1], "again") {
		t.Fatalf("the commands did not run: %q", res)
	}
	testkit.EventuallyF(t, 10*time.Second, "the run's background children to end", func() bool { return len(marked(marker)) == 0 },
		func() string { return fmt.Sprintf("processes %v outlived the run", marked(marker)) })
}

// marked are the PIDs of live processes whose command line holds marker.
func marked(marker string) []int {
	var pids []int
	files, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(b, []byte(marker)) {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killMarked(marker string) {
	for _, pid := range marked(marker) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// alive treats a zombie as dead.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// A command cannot write, truncate or delete outside the workspace.
func TestBashCannotWriteOutsideTheWorkspaceThroughTheBinary(t *testing.T) {
	needSandbox(t)
	outside := t.TempDir()
	keep := filepath.Join(outside, "keep.txt")
	testWriteFile(t, keep, "keep\n")
	srv := fakellm.New(bashLead(
		"echo x > "+outside+"/escape.txt; : > "+keep+"; rm -f "+keep+"; mkdir "+outside+"/d; echo tried",
		"echo fine > inside.txt && cat inside.txt"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", sandboxFlag(), "write around")
	mustSucceed(t, r, "run")
	if res := toolResults(t, ws, "lead"); len(res) != 2 || !strings.Contains(res[0], "tried") || !strings.Contains(res[1], "exit code: 0\nfine") {
		t.Fatalf("the commands did not run as planned: %q", res)
	}
	entries, _ := os.ReadDir(outside)
	if b, err := os.ReadFile(keep); err != nil || string(b) != "keep\n" || len(entries) != 1 {
		t.Fatalf("a command changed a directory outside the workspace: keep.txt %q (%v), %d entries", b, err, len(entries))
	}
}

// The sandbox does not get in the way of normal work: go, git, writing in
// the workspace and its temp dir, pipes, a second command.
func TestSandboxedBashDoesNormalWorkThroughTheBinary(t *testing.T) {
	needSandbox(t)
	ws := t.TempDir()
	git(t, ws, "init", "-q")
	srv := fakellm.New(bashLead(
		`go version && git status --short && echo hi > made.txt && cat made.txt | tr a-z A-Z && touch "$TMPDIR/t" && echo "tmp ok"`,
		"cat made.txt; ls"))
	defer srv.Close()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", sandboxFlag(), "work")
	mustSucceed(t, r, "run")
	res := toolResults(t, ws, "lead")
	if len(res) != 2 {
		t.Fatalf("results %q", res)
	}
	for _, want := range []string{"exit code: 0\n", "go version go", "HI\n", "tmp ok"} {
		if !strings.Contains(res[0], want) {
			t.Errorf("the first command's result lacks %q:\n%s", want, res[0])
		}
	}
	if !strings.Contains(res[1], "exit code: 0\nhi\n") || !strings.Contains(res[1], "made.txt") {
		t.Errorf("the second command's result: %q", res[1])
	}
}

// inNoUserNamespaces runs the binary where the kernel refuses new user
// namespaces: in a user namespace of its own whose limit of nested ones
// is 0.
func inNoUserNamespaces(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		t.Skip("no unshare(1) to make a kernel refuse user namespaces")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c := exec.CommandContext(ctx, unshare, append([]string{"--user", "--map-root-user", "sh", "-c",
		`echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" "$@"`, binary(t)}, args...)...)
	c.Dir = dir
	c.Env = append(append(cleanEnv(), "GORACE=atexit_sleep_ms=0 halt_on_error=1"), env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err = c.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	if s := errb.String(); strings.HasPrefix(s, "unshare: ") || strings.HasPrefix(s, "sh: ") {
		t.Skipf("cannot make a user namespace without nested ones here: %s", errb.String())
	}
	return result{out.String(), errb.String(), code}
}

// Where the kernel refuses: --sandbox required refuses to start with the
// reason; auto says so in one line, runs commands as before and records it.
func TestSandboxUnavailableThroughTheBinary(t *testing.T) {
	needSandbox(t)
	srv := fakellm.New(bashLead("echo ran"))
	defer srv.Close()
	ws := t.TempDir()
	r := inNoUserNamespaces(t, ws, fakeEnv(srv), "run", "--sandbox", "required", "go")
	if r.code != 1 || !strings.Contains(r.stderr, "--sandbox required, but commands cannot be sandboxed here") ||
		!strings.Contains(r.stderr, "user namespaces") {
		t.Fatalf("--sandbox required where the kernel refuses: exit %d\n%s", r.code, r.stderr)
	}
	oneSentence(t, r.stderr)
	if _, err := os.Stat(state(ws, "sessions", "lead.jsonl")); err == nil {
		t.Fatal("--sandbox required started the team anyway")
	}

	r = inNoUserNamespaces(t, ws, fakeEnv(srv), "run", "go")
	mustSucceed(t, r, "run --sandbox auto where the kernel refuses")
	if n := strings.Count(r.stderr, "sandbox: off ("); n != 1 {
		t.Fatalf("stderr says the sandbox is off %d times, want once:\n%s", n, r.stderr)
	}
	if res := toolResults(t, ws, "lead"); len(res) != 1 || !strings.Contains(res[0], "exit code: 0\nran") {
		t.Fatalf("the command did not run unconfined: %q", res)
	}
	r = runBin(t, ws, nil, "", "team")
	mustSucceed(t, r, "team")
	if !strings.Contains(r.stderr, "sandbox: off (") || !strings.Contains(r.stderr, "user namespaces") {
		t.Fatalf("team does not say the sandbox is off and why:\n%s", r.stderr)
	}
}

// --sandbox-network off: a command cannot reach even the model server on
// this machine's loopback; with the network on it can.
func TestSandboxNetworkOffThroughTheBinary(t *testing.T) {
	needSandbox(t)
	for _, network := range []string{"on", "off"} {
		t.Run(network, func(t *testing.T) {
			var addr atomic.Pointer[url.URL] // set before the run, read by the server's goroutines
			srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
				if !called(c.Req.Messages, "bash") {
					u := addr.Load()
					cmd := fmt.Sprintf("(exec 3<>/dev/tcp/%s/%s) 2>/dev/null && echo connected || echo refused", u.Hostname(), u.Port())
					return useTool("bash", fmt.Sprintf(`{"command":%q}`, cmd))
				}
				return fakellm.Reply{Content: "lead: done"}
			})
			defer srv.Close()
			u, err := url.Parse(srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			addr.Store(u)
			ws := t.TempDir()
			r := runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", sandboxFlag(), "--sandbox-network", network, "connect")
			mustSucceed(t, r, "run")
			want := map[string]string{"on": "connected", "off": "refused"}[network]
			if res := toolResults(t, ws, "lead"); len(res) != 1 || !strings.Contains(res[0], want) {
				t.Fatalf("with the network %s the command said %q, want %q", network, res, want)
			}
		})
	}
}

// A command cannot forge a message into an inbox, nor change the team's
// other state files: .agentteam/ is read-only to it, though the workspace
// around it is writable.
func TestBashCannotForgeTheTeamsStateThroughTheBinary(t *testing.T) {
	needSandbox(t)
	forged := `{"id":"forged-1","type":"message","from":"alice","to":"lead","content":"forged by a command","timestamp":"2026-01-01T00:00:00Z"}`
	srv := fakellm.New(bashLead(
		"echo '"+forged+"' >> .agentteam/inbox/lead.jsonl; : > .agentteam/team/config.json; rm -f .agentteam/events.jsonl; echo tried",
		"echo ok > allowed.txt && cat allowed.txt"))
	defer srv.Close()
	ws := t.TempDir()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", sandboxFlag(), "forge")
	mustSucceed(t, r, "run")
	if res := toolResults(t, ws, "lead"); len(res) != 2 || !strings.Contains(res[0], "tried") || !strings.Contains(res[1], "exit code: 0\nok") {
		t.Fatalf("the commands did not run as planned: %q", res)
	}
	for _, m := range readInbox(t, ws, "lead") {
		if strings.Contains(m.Content, "forged by a command") {
			t.Fatalf("a command forged a message into the lead's inbox: %+v", m)
		}
	}
	if cfg := readRegistry(t, ws); cfg.Version == 0 {
		t.Fatalf("a command emptied the registry: %+v", cfg)
	}
	if _, err := os.Stat(state(ws, "events.jsonl")); err != nil {
		t.Fatalf("a command removed events.jsonl: %v", err)
	}
}
