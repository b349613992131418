//go:build unix

package tools

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// File tools must refuse anything but a regular file, and never block on
// one: opening a FIFO for reading waits for a writer, past every timeout.
func TestFileToolsRefuseSpecialFiles(t *testing.T) {
	for _, path := range []string{"notes", "notes.txt", "s", "dev"} {
		for _, tc := range []struct {
			tool string
			args map[string]string
		}{
			{ReadFileName, map[string]string{"path": path}},
			{EditFileName, map[string]string{"path": path, "old_text": "a", "new_text": "b"}},
			{WriteFileName, map[string]string{"path": path, "content": "x"}},
		} {
			t.Run(tc.tool+"/"+path, func(t *testing.T) {
				env, _, _, _ := testEnv(t)
				root := env.Workspace.Root
				kind, ok := makeSpecialFiles(t, root)[path]
				if !ok {
					t.Skipf("cannot make %s here", path)
				}
				r := callBounded(t, env, tc.tool, tc.args, filepath.Join(root, path))
				mustErr(t, r, path+" is "+kind+", not a regular file; file tools read and write regular files only")
				if fi, err := os.Stat(filepath.Join(root, path)); err != nil || fi.Mode().IsRegular() {
					t.Errorf("%s was replaced by a regular file (stat err %v)", path, err)
				}
			})
		}
	}
}

// makeSpecialFiles makes, in root, what it can of: a FIFO, a link to it, a
// unix socket and a character device. It returns each one's path and the
// kind a refusal names.
func makeSpecialFiles(t *testing.T, root string) map[string]string {
	t.Helper()
	special := map[string]string{}
	if err := syscall.Mkfifo(filepath.Join(root, "notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	special["notes"] = "a named pipe (FIFO)"
	if err := os.Symlink("notes", filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	special["notes.txt"] = "a named pipe (FIFO)" // a link inside the workspace to a FIFO
	// A unix socket path must stay short (108 bytes): the workspace may be deep.
	if ln, err := net.Listen("unix", filepath.Join(root, "s")); err == nil {
		t.Cleanup(func() { ln.Close() })
		special["s"] = "a socket"
	} else {
		t.Logf("no unix socket: %v", err)
	}
	// Device nodes need root (or CAP_MKNOD); 1,3 is /dev/null's number on Linux.
	if err := syscall.Mknod(filepath.Join(root, "dev"), syscall.S_IFCHR|0o644, 1<<8|3); err == nil {
		special["dev"] = "a character device"
	} else {
		t.Logf("no device node: %v", err)
	}
	return special
}

// callBounded calls a file tool and fails the test if it has not returned
// within a few seconds. On a timeout it opens the FIFO at unblock for
// writing, so the stuck call (and its goroutine) ends after all.
func callBounded(t *testing.T, env Env, tool string, args map[string]string, unblock string) Result {
	t.Helper()
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Result, 1)
	go func() { done <- ForTeammate(env).Call(context.Background(), tool, string(b)) }()
	select {
	case r := <-done:
		return r
	case <-time.After(5 * time.Second):
		if w, err := os.OpenFile(unblock, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Fatalf("%s %s did not return within 5s: it blocks on a special file", tool, b)
		return Result{}
	}
}

// The file tools honour their context: once it is canceled they neither
// read nor change anything.
func TestFileToolsHonourCanceledContext(t *testing.T) {
	env, _, _, _ := testEnv(t)
	root := env.Workspace.Root
	writeTestFile(t, filepath.Join(root, "a.txt"), "old\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := ForTeammate(env)
	for _, tc := range []struct{ tool, args string }{
		{ReadFileName, `{"path":"a.txt"}`},
		{WriteFileName, `{"path":"b.txt","content":"new"}`},
		{EditFileName, `{"path":"a.txt","old_text":"old","new_text":"new"}`},
		{BashName, `{"command":"touch c.txt"}`},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			mustErr(t, s.Call(ctx, tc.tool, tc.args), "canceled")
		})
	}
	if got := readTestFile(t, filepath.Join(root, "a.txt")); got != "old\n" {
		t.Errorf("a.txt changed under a canceled context: %q", got)
	}
	for _, f := range []string{"b.txt", "c.txt"} {
		if _, err := os.Stat(filepath.Join(root, f)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s was written under a canceled context (stat err %v)", f, err)
		}
	}
}
