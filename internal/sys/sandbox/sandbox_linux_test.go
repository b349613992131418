//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// abstractArg makes the test binary a client of an abstract Unix socket
// (see TestAbstractSocketsOutsideAreOutOfReach).
const abstractArg = "__connect_abstract"

// threadsArg makes the test binary a child that checks Landlock holds on
// every thread (see TestLandlockHoldsOnEveryThread).
const threadsArg = "__landlock_threads"

func TestMain(m *testing.M) {
	Init() // the test binary is the sandbox's init when Command re-executes it
	if len(os.Args) == 3 && os.Args[1] == threadsArg {
		os.Exit(threadsChild(os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == abstractArg {
		os.Exit(connectAbstract(os.Args[2]))
	}
	os.Exit(m.Run())
}

// needSandbox skips where this kernel cannot sandbox, saying why.
func needSandbox(t *testing.T) {
	t.Helper()
	if err := Check(context.Background(), false); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI's kernel sandboxes commands, but here: %v", err)
		}
		t.Skipf("no sandbox on this machine: %v", err)
	}
}

type ran struct {
	out  string
	code int
}

// run runs script with bash under p, bounded.
func run(t *testing.T, p Policy, script string) ran {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if p.Env == nil {
		p.Env = []string{"PATH=" + os.Getenv("PATH")}
	}
	cmd := Command(ctx, p, "bash", "-c", script)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		t.Fatalf("run %q: %v\n%s", script, err, out.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("%q did not end in time:\n%s", script, out.String())
	}
	return ran{out.String(), cmd.ProcessState.ExitCode()}
}

func TestWritesOnlyWhereThePolicySays(t *testing.T) {
	needSandbox(t)
	base := t.TempDir()
	root, tmp, outside := filepath.Join(base, "root"), filepath.Join(base, "tmp"), filepath.Join(base, "outside")
	for _, d := range []string{root, tmp, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "keep.txt"), []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Policy{Dir: root, Writable: []string{tmp}}

	r := run(t, p, "echo in > in.txt && mkdir -p a/b && echo x > a/b/x && mv a/b/x a/y && echo t > "+tmp+"/t && echo null > /dev/null && cat in.txt")
	if r.code != 0 || strings.TrimSpace(r.out) != "in" {
		t.Fatalf("writing in the root and the temp dir failed: exit %d\n%s", r.code, r.out)
	}
	for _, attack := range []string{
		"echo x > " + outside + "/new.txt",
		"echo x >> " + outside + "/keep.txt",
		": > " + outside + "/keep.txt",
		"rm -f " + outside + "/keep.txt",
		"truncate -s 0 " + outside + "/keep.txt",
		"mv " + outside + "/keep.txt " + root + "/stolen.txt",
		"ln -s /etc " + outside + "/link",
	} {
		if r := run(t, p, attack); r.code == 0 {
			t.Errorf("%q succeeded outside the writable dirs:\n%s", attack, r.out)
		}
	}
	entries, _ := os.ReadDir(outside)
	if b, err := os.ReadFile(filepath.Join(outside, "keep.txt")); err != nil || string(b) != "keep\n" || len(entries) != 1 {
		t.Fatalf("the directory outside changed: %q %v, %d entries", b, err, len(entries))
	}
}

func TestReadOnlyWritesNothing(t *testing.T) {
	needSandbox(t)
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("a\na\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Policy{Dir: root, Writable: []string{t.TempDir()}, ReadOnly: true}
	if r := run(t, p, "cat notes.txt | sort | uniq -c > /dev/null && wc -l < notes.txt"); r.code != 0 || strings.TrimSpace(r.out) != "3" {
		t.Fatalf("reading in read-only mode failed: exit %d\n%s", r.code, r.out)
	}
	for _, attack := range []string{"uniq notes.txt out", "find . -fprint0 f", "touch x", "rm notes.txt", ": > notes.txt", "echo t > " + p.Writable[0] + "/t"} {
		run(t, p, attack)
	}
	entries, _ := os.ReadDir(root)
	if b, _ := os.ReadFile(filepath.Join(root, "notes.txt")); len(entries) != 1 || string(b) != "a\na\nb\n" {
		t.Fatalf("read-only mode let a command write: %d entries, notes.txt %q", len(entries), b)
	}
	if entries, _ := os.ReadDir(p.Writable[0]); len(entries) != 0 {
		t.Fatalf("read-only mode let a command write its temp dir: %v", entries)
	}
}

// The command sees its own processes only, and its environment is the
// policy's: agentteam's environment is not in any /proc file it can read.
func TestSeesOnlyItsOwnProcessesAndEnvironment(t *testing.T) {
	needSandbox(t)
	t.Setenv("SANDBOX_TEST_SECRET_VALUE", "s3cr3t-parent-value")
	p := Policy{Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH"), "ONLY=this"}}
	r := run(t, p, `env; cat /proc/$PPID/environ /proc/*/environ 2>/dev/null | tr '\0' '\n'; echo PPID=$PPID; ls /proc | grep -cE '^[0-9]+$'`)
	if strings.Contains(r.out, "s3cr3t-parent-value") {
		t.Fatalf("the command read agentteam's environment:\n%s", r.out)
	}
	if !strings.Contains(r.out, "ONLY=this") || !strings.Contains(r.out, "PPID=1\n") {
		t.Fatalf("the command's environment or parent is not the sandbox's:\n%s", r.out)
	}
	lines := strings.Split(strings.TrimSpace(r.out), "\n")
	if n, err := strconv.Atoi(lines[len(lines)-1]); err != nil || n > 6 {
		t.Fatalf("the command sees %q processes, not only its own:\n%s", lines[len(lines)-1], r.out)
	}
}

// Background children, setsid ones too, end when the command ends.
func TestNoBackgroundChildSurvives(t *testing.T) {
	needSandbox(t)
	marker := fmt.Sprintf("1000.%d", rand.Int64N(1e12))
	r := run(t, Policy{Dir: t.TempDir()}, "sleep "+marker+" & setsid sleep "+marker+" & nohup sleep "+marker+" >/dev/null 2>&1 & disown; echo started")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.out)
	}
	waitGone(t, marker)
}

// Canceling the command ends everything it started, at once.
func TestCancelEndsEverything(t *testing.T) {
	needSandbox(t)
	marker := fmt.Sprintf("1000.%d", rand.Int64N(1e12))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := Command(ctx, Policy{Dir: t.TempDir(), Env: []string{"PATH=" + os.Getenv("PATH")}}, "bash", "-c", "setsid sleep "+marker+" & sleep "+marker)
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 10*time.Second, "both sleeps to start", func() bool { return countMarker(marker) == 2 })
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Fatal("a canceled command reported success")
	}
	waitGone(t, marker)
}

func TestExitCodes(t *testing.T) {
	needSandbox(t)
	for script, want := range map[string]int{"exit 0": 0, "exit 7": 7, "kill -TERM $$": 128 + 15, "no-such-program-here": 127} {
		if r := run(t, Policy{Dir: t.TempDir()}, script); r.code != want {
			t.Errorf("%q: exit %d, want %d\n%s", script, r.code, want, r.out)
		}
	}
}

func TestNetworkOff(t *testing.T) {
	needSandbox(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer serveHello(ln, "hello\n")()
	port := ln.Addr().(*net.TCPAddr).Port
	script := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", port)
	if r := run(t, Policy{Dir: t.TempDir(), Network: true}, script); r.code != 0 || !strings.Contains(r.out, "hello") {
		t.Fatalf("with the network on, the command could not connect: exit %d\n%s", r.code, r.out)
	}
	if r := run(t, Policy{Dir: t.TempDir(), Network: false}, script); r.code == 0 || strings.Contains(r.out, "hello") {
		t.Fatalf("with the network off, the command connected: exit %d\n%s", r.code, r.out)
	}
}

// go-landlock restricts every thread of the Go process, not only the one
// that asked: a write from any thread after restrict fails.
func TestLandlockHoldsOnEveryThread(t *testing.T) {
	needSandbox(t)
	dir := t.TempDir()
	out, err := exec.Command(os.Args[0], threadsArg, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a thread wrote after Landlock was applied: %v", entries)
	}
}

// threadsChild starts many threads, restricts, then tries to write into
// dir from each of them; 0 when every write was refused.
func threadsChild(dir string) int {
	const n = 16
	var started, wrote sync.WaitGroup
	gate := make(chan struct{})
	var mu sync.Mutex
	var written []string
	started.Add(n)
	wrote.Add(n)
	for i := range n {
		go func() {
			defer wrote.Done()
			runtime.LockOSThread() // keep one goroutine per thread
			started.Done()
			<-gate
			name := filepath.Join(dir, fmt.Sprintf("t%d", i))
			if err := os.WriteFile(name, []byte("x"), 0o644); err == nil {
				mu.Lock()
				written = append(written, name)
				mu.Unlock()
			}
		}()
	}
	started.Wait()
	if err := restrict(nil, true); err != nil {
		fmt.Println(err)
		return 2
	}
	close(gate)
	wrote.Wait()
	if len(written) > 0 {
		fmt.Println("written:", written)
		return 1
	}
	return 0
}

// countMarker counts the live sleep processes, anywhere on the machine,
// whose command line is "sleep marker" (not the shells that started them).
func countMarker(marker string) int {
	n := 0
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err == nil && bytes.Equal(b, []byte("sleep\x00"+marker+"\x00")) && !isZombie(filepath.Dir(f)) {
			n++
		}
	}
	return n
}

func isZombie(procDir string) bool {
	b, err := os.ReadFile(filepath.Join(procDir, "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

func waitGone(t *testing.T, marker string) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, "every process with "+marker+" to end", func() bool { return countMarker(marker) == 0 })
}

// Run by hand, not as the first process of a new PID namespace, the init
// refuses before it mounts anything (it would change the machine's /proc).
// The child gets a mount namespace of its own all the same, so a broken
// check could not reach the machine's.
func TestInitRefusesOutsideItsNamespaces(t *testing.T) {
	needSandbox(t)
	c := exec.Command(os.Args[0], initArg, "{}", "bash", "-c", "echo ran")
	c.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
	}
	out, err := c.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != exitSetup || strings.Contains(string(out), "ran") ||
		!strings.Contains(string(out), "runs only as started by agentteam") {
		t.Fatalf("the init run by hand: %v\n%s", err, out)
	}
}

// A protected directory inside the writable root stays read-only (the
// team's state: inboxes, registry, conversations), except a writable dir
// inside it (a teammate's worktree).
func TestProtectedDirStaysReadOnly(t *testing.T) {
	needSandbox(t)
	root := t.TempDir()
	state, wt := filepath.Join(root, ".agentteam"), filepath.Join(root, ".agentteam", "worktrees", "alice")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	inbox := filepath.Join(state, "inbox.jsonl")
	if err := os.WriteFile(inbox, []byte("line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := Policy{Dir: root, Protect: []string{state}}
	if r := run(t, p, "echo a > a.txt && cat a.txt"); r.code != 0 {
		t.Fatalf("the root is not writable: exit %d\n%s", r.code, r.out)
	}
	for _, attack := range []string{
		"echo forged >> .agentteam/inbox.jsonl", ": > .agentteam/inbox.jsonl", "rm -f .agentteam/inbox.jsonl",
		"touch .agentteam/new", "mv .agentteam .moved", "rm -rf .agentteam", "umount .agentteam",
	} {
		if r := run(t, p, attack); r.code == 0 {
			t.Errorf("%q succeeded in the protected dir:\n%s", attack, r.out)
		}
	}
	if b, err := os.ReadFile(inbox); err != nil || string(b) != "line\n" {
		t.Fatalf("the protected inbox changed: %q %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(state, "new")); err == nil {
		t.Fatal("a file was made in the protected dir")
	}
	// A worktree inside it, given as the command's root, stays writable.
	p = Policy{Dir: wt, Protect: []string{state}}
	if r := run(t, p, "echo b > b.txt && cat b.txt && ! echo x > ../../inbox.jsonl"); r.code != 0 {
		t.Fatalf("the worktree inside the protected dir is not writable, or its parent is: exit %d\n%s", r.code, r.out)
	}
	if b, _ := os.ReadFile(inbox); string(b) != "line\n" {
		t.Fatalf("the protected inbox changed: %q", b)
	}
}

// A command runs as the person who runs agentteam, inside as outside, and
// is not root of its namespace: it has no capability and cannot mount,
// chroot, change its groups or make a user namespace of its own (where it
// would be root again).
func TestCommandRunsAsThePersonWithoutPrivilege(t *testing.T) {
	needSandbox(t)
	for _, tool := range []string{"id", "stat", "unshare", "chroot", "mount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
	}
	dir := t.TempDir()
	script := `echo "uid=$(id -u) gid=$(id -g)"
touch made
echo "setgroups=$(cat /proc/self/setgroups)"
grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status
unshare -U true && echo "BROKE unshare -U"
unshare -m true && echo "BROKE unshare -m"
mkdir -p m && mount -t tmpfs none m && echo "BROKE mount"
chroot / true && echo "BROKE chroot"
echo END`
	r := run(t, Policy{Dir: dir}, script)
	if r.code != 0 || !strings.Contains(r.out, "END") {
		t.Fatalf("the script did not run to its end: exit %d\n%s", r.code, r.out)
	}
	if want := fmt.Sprintf("uid=%d gid=%d\n", os.Geteuid(), os.Getegid()); !strings.Contains(r.out, want) {
		t.Errorf("the command's ids are not the person's (%q):\n%s", want, r.out)
	}
	if !strings.Contains(r.out, "setgroups=deny\n") {
		t.Errorf("setgroups is not denied:\n%s", r.out)
	}
	caps := 0
	for _, line := range strings.Split(r.out, "\n") {
		if !strings.HasPrefix(line, "Cap") {
			continue
		}
		caps++
		if _, v, _ := strings.Cut(line, ":"); strings.Trim(strings.TrimSpace(v), "0") != "" {
			t.Errorf("the command holds capabilities: %s", line)
		}
	}
	if caps != 5 {
		t.Errorf("read %d capability sets, want 5:\n%s", caps, r.out)
	}
	if strings.Contains(r.out, "BROKE") {
		t.Errorf("the command acted as root of its namespace:\n%s", r.out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "made"), &st); err != nil {
		t.Fatalf("the command's file: %v", err)
	}
	if int(st.Uid) != os.Geteuid() || int(st.Gid) != os.Getegid() {
		t.Errorf("the command's file is owned by %d:%d, not the person %d:%d", st.Uid, st.Gid, os.Geteuid(), os.Getegid())
	}
}

// connectAbstract connects to the abstract Unix socket name and reads its
// greeting: 0 and "CONNECTED" when it could.
func connectAbstract(name string) int {
	c, err := net.Dial("unix", "@"+name)
	if err != nil {
		fmt.Println("refused:", err)
		return 1
	}
	defer c.Close()
	buf := make([]byte, 5)
	if _, err := c.Read(buf); err != nil || string(buf) != "hello" {
		fmt.Println("no greeting:", err)
		return 1
	}
	fmt.Println("CONNECTED")
	return 0
}

// With the network on (no network namespace of its own), a command still
// cannot reach an abstract Unix socket of a process outside the sandbox
// (Landlock ABI 6 scoping): a daemon listening on one is out of reach.
func TestAbstractSocketsOutsideAreOutOfReach(t *testing.T) {
	needSandbox(t)
	if abi := ABI(); abi < 6 {
		t.Skipf("Landlock ABI %d does not scope abstract Unix sockets (6 does)", abi)
	}
	name := fmt.Sprintf("agentteam-test-%d", rand.Int64())
	ln, err := net.Listen("unix", "@"+name)
	if err != nil {
		t.Fatal(err)
	}
	defer serveHello(ln, "hello")()
	// Outside the sandbox the socket answers, so the refusal below is the sandbox's.
	if out, err := exec.Command(os.Args[0], abstractArg, name).CombinedOutput(); err != nil || !strings.Contains(string(out), "CONNECTED") {
		t.Fatalf("outside the sandbox the socket does not answer: %v\n%s", err, out)
	}
	script := fmt.Sprintf("'%s' %s %s", os.Args[0], abstractArg, name)
	r := run(t, Policy{Dir: t.TempDir(), Network: true}, script)
	if r.code == 0 || strings.Contains(r.out, "CONNECTED") || !strings.Contains(r.out, "refused") {
		t.Fatalf("a sandboxed command reached the abstract socket outside: exit %d\n%s", r.code, r.out)
	}
}

// serveHello answers every connection to ln with hello until the returned
// stop closes ln and waits for the accept loop to end.
func serveHello(ln net.Listener, hello string) (stop func()) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(hello))
			c.Close()
		}
	}()
	return func() {
		ln.Close() // ends the accept loop
		wg.Wait()
	}
}
