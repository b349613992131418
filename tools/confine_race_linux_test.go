package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentteam/agentteam/internal/testutil/testfs"
)

// A teammate's bash can swap a directory of the workspace for a link to
// somewhere else at any moment. The file tools run in agentteam's own
// process: none of their writes may ever land outside, and no read may
// return what is outside, however the swap falls between their steps.
func TestFileToolsCannotBeRacedOutOfTheWorkspace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(root, outside string) string // what sub is swapped for a link to
		writes bool                              // the target can be written by this test
	}{
		{"absolute link", func(_, outside string) string { return outside }, true},
		{"relative link", func(root, outside string) string {
			rel, err := filepath.Rel(root, outside)
			if err != nil {
				t.Fatal(err)
			}
			return rel
		}, true},
		{"link to proc", func(string, string) string { return "/proc/self" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, _, _, _ := testEnv(t)
			root := env.Workspace.Root
			outside, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			target := tc.target(root, outside)
			if !tc.writes {
				if _, err := os.Stat("/proc/self/environ"); err != nil {
					t.Skipf("no /proc here: %v", err)
				}
			}
			sub := filepath.Join(root, "sub")
			// Inside, sub holds the files the calls name; outside holds files
			// of the same names, which must stay as they are.
			for name, text := range map[string]string{"f.txt": "x\n", "secret.txt": "inside\n", "environ": "inside\n"} {
				writeTestFile(t, filepath.Join(sub, name), text)
			}
			writeTestFile(t, filepath.Join(outside, "f.txt"), "x\n")
			writeTestFile(t, filepath.Join(outside, "secret.txt"), "OUTSIDE\n")
			before, err := os.Stat(filepath.Join(outside, "f.txt"))
			if err != nil {
				t.Fatal(err)
			}

			var (
				mu       sync.Mutex
				bad      []string
				next     atomic.Int64
				callers  sync.WaitGroup
				writesOK atomic.Int64
			)
			report := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				if len(bad) < 10 {
					bad = append(bad, fmt.Sprintf(format, args...))
				}
			}
			// The swap is atomic (RENAME_EXCHANGE), as a teammate's
			// `mv --exchange` makes it: sub is the directory or the link, never missing.
			aside := filepath.Join(root, "aside")
			if err := os.Symlink(target, aside); err != nil {
				t.Fatal(err)
			}
			stopSwaps := testfs.Swap(sub, aside)

			const calls = 1000
			s := ForTeammate(env)
			for range 4 {
				callers.Go(func() {
					for {
						i := next.Add(1)
						if i > calls {
							return
						}
						args, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("sub/w-%d.txt", i), "content": "written\n"})
						if r := s.Call(context.Background(), WriteFileName, string(args)); !r.IsError {
							writesOK.Add(1)
						} else if !strings.Contains(r.Content, "leads outside the workspace") && !strings.Contains(r.Content, "symbolic links") {
							report("write_file sub/w-%d.txt: %s", i, r.Content)
						}
						s.Call(context.Background(), EditFileName, `{"path":"sub/f.txt","old_text":"x","new_text":"x"}`)
						for _, name := range []string{"secret.txt", "environ"} {
							r := s.Call(context.Background(), ReadFileName, `{"path":"sub/`+name+`"}`)
							switch {
							case !r.IsError && r.Content != "inside\n":
								report("read_file sub/%s returned %q", name, r.Content)
							case r.IsError && (strings.Contains(r.Content, "binary") || strings.Contains(r.Content, "OUTSIDE")):
								report("read_file sub/%s opened the file outside: %s", name, r.Content)
							}
						}
					}
				})
			}
			callers.Wait()
			swaps, err := stopSwaps()
			if err != nil {
				report("swap: %v", err)
			}
			t.Logf("%d swaps, %d of %d writes done", swaps, writesOK.Load(), calls)
			if swaps < 100 || writesOK.Load() == 0 {
				t.Fatalf("%d swaps and %d writes done: the race was not run", swaps, writesOK.Load())
			}

			entries, err := os.ReadDir(outside)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() != "f.txt" && e.Name() != "secret.txt" {
					report("a file landed outside the workspace: %s", e.Name())
				}
			}
			after, err := os.Stat(filepath.Join(outside, "f.txt"))
			if err != nil || !os.SameFile(before, after) {
				report("edit_file replaced f.txt outside the workspace (stat err %v)", err)
			}
			if got := readTestFile(t, filepath.Join(outside, "secret.txt")); got != "OUTSIDE\n" {
				report("secret.txt outside was changed: %q", got)
			}
			for _, b := range bad {
				t.Error(b)
			}
		})
	}
}

// A link to agentteam's own /proc entries is refused however it is
// written: its environment holds the model's API key.
func TestReadFileRefusesProcLinks(t *testing.T) {
	if _, err := os.Stat("/proc/self/root"); err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	env, _, _, _ := testEnv(t)
	root := env.Workspace.Root
	writeTestFile(t, filepath.Join(root, "a.txt"), "inside\n")
	up := strings.Repeat("../", strings.Count(root, "/"))
	for link, target := range map[string]string{
		"environ":     "/proc/self/environ",
		"relenviron":  up + "proc/self/environ",
		"procroot":    "/proc/self/root",
		"relprocroot": up + "proc/self/root",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{
		"environ",
		"relenviron",
		"procroot" + root + "/a.txt",
		"relprocroot" + root + "/a.txt",
		"/proc/self/root" + root + "/a.txt",
		"/proc/self/environ",
	} {
		t.Run(p, func(t *testing.T) {
			r := call(t, env, ReadFileName, map[string]string{"path": p})
			if !r.IsError || !strings.Contains(r.Content, "outside the workspace") {
				t.Fatalf("read_file %s: %q, want a refusal as outside the workspace", p, r.Content)
			}
		})
	}
}

// The same as a normal user: CI runs as root, so the test runs itself
// again as nobody (uid 65534), whose timing the race found easier.
func TestFileToolsCannotBeRacedOutOfTheWorkspaceAsANormalUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestFileToolsCannotBeRacedOutOfTheWorkspace already runs as a normal user")
	}
	const nobody = 65534
	dir, err := os.MkdirTemp("", "agentteam-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin, tmp := filepath.Join(dir, "tools.test"), filepath.Join(dir, "tmp")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	c := exec.Command(bin, "-test.run", "^TestFileToolsCannotBeRacedOutOfTheWorkspace$", "-test.count=1", "-test.v")
	c.Dir = tmp
	c.Env = append(os.Environ(), "TMPDIR="+tmp, "HOME="+tmp)
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestFileToolsCannotBeRacedOutOfTheWorkspace") {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
}
