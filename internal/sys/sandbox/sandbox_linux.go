//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// initArg is the hidden first argument that makes agentteam's binary the
// sandbox's init process instead of the command line program.
const initArg = "__sandbox"

// self is agentteam's own binary, still reachable if the file was
// replaced or removed since it started.
const self = "/proc/self/exe"

// exitSetup is the init's exit code when it could not build the sandbox;
// its one line on stderr says why.
const exitSetup = 125

// devices are the files every command may write, sandbox or not: shells
// and tools send output to /dev/null and read or write the terminal.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// spec is what the parent tells the init process, as its argument.
type spec struct {
	Writable []string `json:"writable,omitempty"` // Dir included unless ReadOnly
	Protect  []string `json:"protect,omitempty"`
	Git      []string `json:"git,omitempty"` // the git dirs to guard (guardGit)
	Hidden   []string `json:"hidden,omitempty"`
	Network  bool     `json:"network,omitempty"`
	// Probe: build the sandbox, then exit 0 without running anything.
	Probe bool `json:"probe,omitempty"`
}

// Command is argv run under p: an init process (agentteam's binary again,
// see Init) started in new user, PID and mount namespaces (and a network
// namespace when p.Network is false) builds the sandbox and runs argv as
// its only child. Canceling ctx kills the init, and with it, by the
// kernel's rule for a PID namespace, every process the command started.
// The caller sets Stdout and Stderr.
func Command(ctx context.Context, p Policy, argv ...string) *exec.Cmd {
	s := spec{Network: p.Network, Protect: p.Protect, Hidden: p.Hidden}
	// Found for each command: one may have made the repository since.
	r := findRepo(p.Dir)
	s.Git = r.dirs
	s.Protect = slices.Concat(p.Protect, r.files, r.hooks)
	if !p.ReadOnly {
		s.Writable = append([]string{p.Dir}, p.Writable...)
	}
	return command(ctx, s, p.Dir, p.Env, argv)
}

func command(ctx context.Context, s spec, dir string, env, argv []string) *exec.Cmd {
	arg, _ := json.Marshal(s) // strings and bools only: cannot fail
	cmd := exec.CommandContext(ctx, self, append([]string{initArg, string(arg)}, argv...)...)
	cmd.Args[0] = "agentteam-sandbox"
	cmd.Dir = dir
	cmd.Env = env
	if cmd.Env == nil {
		cmd.Env = []string{} // nil would mean agentteam's own environment
	}
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID | syscall.CLONE_NEWNS)
	if !s.Network {
		flags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Geteuid(), os.Getegid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: flags,
		// The person's own ids inside as outside: `id -u` says who they
		// are and the files a command makes are theirs. The only id
		// mapped, so nobody in the namespace is its root (unless the
		// person is root, and then root without capabilities).
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		// setgroups(2) is denied for good in the namespace.
		GidMappingsEnableSetgroups: false,
		// The init alone keeps what it needs to build the sandbox (mount
		// /proc and the read-only binds, cap the namespace's own user
		// namespaces); it drops them all before the command starts.
		AmbientCaps: initCaps,
		// If agentteam dies, so does the command with all it started.
		Pdeathsig: syscall.SIGKILL,
		// Its own process group: a ctrl+c at the terminal reaches
		// agentteam, which ends the command itself.
		Setpgid: true,
	}
	return cmd
}

// initCaps are the capabilities, in its own user namespace, that the init
// process keeps across its execve although it does not run as root there.
var initCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_SYS_RESOURCE}

// Check builds one sandbox with the given network setting and runs
// nothing in it, to learn whether this kernel lets commands be sandboxed.
// The error says why not in one sentence.
func Check(ctx context.Context, network bool) error {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		if err == nil {
			err = fmt.Errorf("ABI %d", abi)
		}
		return fmt.Errorf("no Landlock in this kernel (%w): it lacks it or it is off at boot", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := command(ctx, spec{Network: network, Probe: true}, "/", nil, nil)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exitErr) && out.Len() > 0:
		return errors.New(strings.TrimPrefix(strings.TrimSpace(firstLine(out.String())), "sandbox: "))
	case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES):
		return errors.New("the kernel refuses new user namespaces to this user (operation not permitted)")
	case errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EUSERS):
		return errors.New("the kernel allows no more user namespaces here (user.max_user_namespaces)")
	case errors.Is(err, syscall.EINVAL):
		return errors.New("the kernel has no user, PID or mount namespaces")
	}
	return fmt.Errorf("could not start the sandbox: %w", err)
}

// ABI is the Landlock ABI version this kernel offers, 0 without Landlock.
func ABI() int {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return abi
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// Init runs the sandbox's init process when the binary was started as one
// (by Command), and never returns then; otherwise it returns at once. It
// must be the first thing main does.
func Init() {
	if len(os.Args) < 3 || os.Args[1] != initArg {
		return
	}
	os.Exit(runInit(os.Args[2], os.Args[3:]))
}

// runInit builds the sandbox around itself, runs argv as its child, reaps
// every orphan the command leaves, and exits with the child's status;
// its exit ends every process still in the namespace.
func runInit(arg string, argv []string) int {
	// Only as the first process of a new PID namespace: by hand, in the
	// machine's own namespaces, the mounts below would change the host's.
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "sandbox: the init process runs only as started by agentteam, in new namespaces")
		return exitSetup
	}
	var s spec
	if err := json.Unmarshal([]byte(arg), &s); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: bad init argument: %v\n", err)
		return exitSetup
	}
	if err := confine(s); err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		return exitSetup
	}
	if s.Probe {
		return 0
	}
	if len(argv) == 0 {
		fmt.Fprintln(os.Stderr, "sandbox: no command")
		return exitSetup
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		return 127
	}
	wd, _ := os.Getwd()
	child, err := os.StartProcess(path, argv, &os.ProcAttr{
		Dir:   wd,
		Env:   os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "sandbox: %v\n", err)
		return 126
	}
	return reap(child.Pid)
}

// confine makes this process's view and rights the sandbox's: a fresh /proc
// for its PID namespace, then Landlock on every thread. Whatever it starts
// afterwards inherits both.
func confine(s spec) error {
	// Nothing mounted here may reach the namespace we came from.
	if err := unix.Mount("none", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("cannot make the mount namespace private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("cannot mount a fresh /proc: %w", err)
	}
	if err := protect(s.Protect, s.Writable); err != nil {
		return err
	}
	if err := guardGit(s.Git, s.Writable); err != nil {
		return err
	}
	wd, _ := os.Getwd()
	if err := hide(s.Hidden, append([]string{wd}, s.Writable...)); err != nil {
		return err
	}
	// No user namespace can be made inside this one: a command that made
	// one would be its root, with every capability there.
	if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0); err != nil {
		return fmt.Errorf("cannot forbid nested user namespaces: %w", err)
	}
	if err := restrict(s.Writable, s.Network); err != nil {
		return err
	}
	return dropCaps()
}

// Securebits (linux/securebits.h): uid 0 gains no capability by execve,
// no ambient capability can be raised again, and neither can be undone.
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
)

// dropCaps leaves every thread of this process without any capability, for
// good: the command, which this process starts next, inherits none and
// can gain none by execve, whatever its uid (so it cannot mount, chroot,
// set its groups or act as root of the namespace in any other way).
// Capabilities are per thread: each call is made on every thread at once.
func dropCaps() error {
	bits := uintptr(secbitNoRoot | secbitNoRootLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked)
	if err := llsys.AllThreadsPrctl(unix.PR_SET_SECUREBITS, bits, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot lock the securebits: %w", err)
	}
	for c := uintptr(0); ; c++ {
		err := llsys.AllThreadsPrctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0)
		if errors.Is(err, syscall.EINVAL) {
			break // past the kernel's last capability
		}
		if err != nil {
			return fmt.Errorf("cannot drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := llsys.AllThreadsPrctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("cannot clear the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var none [2]unix.CapUserData // effective, permitted and inheritable all empty
	if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0); e != 0 {
		return fmt.Errorf("cannot drop the capabilities: %w", e)
	}
	return nil
}

// protect makes each path, a directory or a file, read-only in this mount
// namespace (a read-only bind mount over itself), then a writable dir
// inside one writable again. Landlock, applied next, forbids the command
// to undo either.
func protect(paths, writable []string) error {
	for _, path := range paths {
		fi, err := os.Stat(path)
		if err != nil {
			continue // nothing there to protect yet
		}
		if err := bindReadOnly(path); err != nil {
			return fmt.Errorf("cannot protect %s: %w", path, err)
		}
		if !fi.IsDir() {
			continue
		}
		for _, w := range writable {
			if !within(w, path) {
				continue
			}
			// The bind copies the read-only flag of the mount it comes
			// through; the remount takes it off again.
			if err := unix.Mount(w, w, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("cannot keep %s writable: %w", w, err)
			}
			if err := remount(w, 0); err != nil {
				return fmt.Errorf("cannot keep %s writable: %w", w, err)
			}
		}
	}
	return nil
}

// bindReadOnly mounts path, a directory or a file, read-only over itself.
func bindReadOnly(path string) error {
	if err := unix.Mount(path, path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	return remount(path, unix.MS_RDONLY)
}

// remount sets the flags of the bind mount at path to flags, keeping those
// of the mount it came from that a user namespace may not clear (nosuid,
// nodev, noexec and the atime ones): the kernel refuses the remount else.
func remount(path string, flags uintptr) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return err
	}
	for _, f := range []struct{ st, ms uintptr }{
		{unix.ST_NOSUID, unix.MS_NOSUID}, {unix.ST_NODEV, unix.MS_NODEV}, {unix.ST_NOEXEC, unix.MS_NOEXEC},
		{unix.ST_NOATIME, unix.MS_NOATIME}, {unix.ST_NODIRATIME, unix.MS_NODIRATIME}, {unix.ST_RELATIME, unix.MS_RELATIME},
	} {
		if uintptr(st.Flags)&f.st != 0 {
			flags |= f.ms
		}
	}
	return unix.Mount("", path, "", unix.MS_BIND|unix.MS_REMOUNT|flags, "")
}

// restrict applies Landlock to every thread of this process (go-landlock
// does it for all of them, not only the calling one): read and execute
// everywhere, write only in writable and the devices; with network
// false, no TCP either. It also keeps the command from signalling or
// reaching abstract sockets of processes outside the sandbox.
func restrict(writable []string, network bool) error {
	cfg := landlock.V7
	if network {
		cfg = landlock.MustConfig(landlock.V7.HandledAccessFS, landlock.V7.Scoped)
	}
	rules := []landlock.Rule{
		landlock.RODirs("/"),
		landlock.RWFiles(devices...).IgnoreIfMissing(),
	}
	if len(writable) > 0 {
		// WithRefer: mv and git move files between directories.
		rules = append(rules, landlock.RWDirs(writable...).WithRefer().IgnoreIfMissing())
	}
	if err := cfg.BestEffort().Restrict(rules...); err != nil {
		return fmt.Errorf("cannot apply Landlock: %w", err)
	}
	return nil
}

// reap waits for every child this init process gets, orphans included, so
// none stays a zombie, until child itself ends; it returns child's exit
// code, 128+N for a signal N as shells do.
func reap(child int) int {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			fmt.Fprintf(os.Stderr, "sandbox: wait: %v\n", err)
			return exitSetup
		case pid != child:
			continue
		case ws.Signaled():
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}
