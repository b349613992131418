//go:build linux

package cmd

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// nobody is the normal user a test run as root (CI) drops to.
const nobody = 65534

// sandboxUser runs the binary as one user, in a workspace and a home that
// user owns.
type sandboxUser struct {
	uid           int
	bin, ws, home string
}

// testUser is who a sandbox test runs the binary as.
type testUser struct {
	name string
	uid  int
}

// sandboxUsers are the users a sandbox test runs as: the person running
// the tests and, when that is root, nobody too, so each attack is tried
// both with and without root's ids.
func sandboxUsers() []testUser {
	users := []testUser{{"person", os.Geteuid()}}
	if os.Geteuid() == 0 {
		users = append(users, testUser{"nobody", nobody})
	}
	return users
}

// newSandboxUser makes a copy of the binary, a workspace and a home where
// uid can reach them: not under t.TempDir, whose directories only their
// owner may enter.
func newSandboxUser(t *testing.T, uid int) sandboxUser {
	t.Helper()
	dir, err := os.MkdirTemp("", "agentteam-user-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	u := sandboxUser{uid: uid, bin: filepath.Join(dir, "agentteam"), ws: filepath.Join(dir, "ws"), home: filepath.Join(dir, "home")}
	copyFile(t, binary(t), u.bin, 0o755)
	for _, d := range []string{u.ws, u.home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return u
}

// own gives the user every file of its workspace and home, made by the
// test as the person.
func (u sandboxUser) own(t *testing.T) {
	t.Helper()
	if u.uid == os.Geteuid() {
		return
	}
	for _, d := range []string{u.ws, u.home} {
		err := filepath.Walk(d, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, u.uid, u.uid)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// run runs the binary as the user in its workspace, with its home.
func (u sandboxUser) run(t *testing.T, env []string, args ...string) result {
	t.Helper()
	var cred *syscall.Credential
	if u.uid != os.Geteuid() {
		cred = &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}
	}
	return runCommand(t, u.bin, u.ws, append([]string{"HOME=" + u.home}, env...), "", cred, args...)
}
