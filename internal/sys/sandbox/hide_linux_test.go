//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Hidden files and directories read as empty, by their path or through a
// symlink, and cannot be written; a missing one is skipped.
func TestHiddenPathsAreMasked(t *testing.T) {
	needSandbox(t)
	home, root := t.TempDir(), t.TempDir()
	const secret = "s3cr3t-hidden-value"
	ssh, netrc := filepath.Join(home, ".ssh"), filepath.Join(home, ".netrc")
	if err := os.Mkdir(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(ssh, "id_rsa"), netrc, filepath.Join(home, "visible")} {
		if err := os.WriteFile(f, []byte(secret+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(ssh, "id_rsa"), filepath.Join(root, "key")); err != nil {
		t.Fatal(err)
	}
	p := Policy{Dir: root, Writable: []string{home}, Hidden: []string{ssh, netrc, filepath.Join(home, "missing")}}
	r := run(t, p, "cat "+ssh+"/id_rsa; cat key; cat "+netrc+"; ls -A "+ssh+"; grep -r s3cr3t "+home+"; "+
		"echo x > "+ssh+"/new; echo x > "+netrc+"; rm -f "+netrc+"; echo END")
	if !strings.Contains(r.out, filepath.Join(home, "visible")+":"+secret) {
		t.Fatalf("the grep did not find the file left visible:\n%s", r.out)
	}
	for _, line := range strings.Split(r.out, "\n") {
		if strings.Contains(line, secret) && !strings.HasPrefix(line, filepath.Join(home, "visible")+":") {
			t.Errorf("a hidden secret was read: %q\n%s", line, r.out)
		}
	}
	if !strings.Contains(r.out, "END") {
		t.Fatalf("the command did not run to its end:\n%s", r.out)
	}
	if _, err := os.Stat(filepath.Join(ssh, "new")); err == nil {
		t.Error("a file was made in a hidden directory")
	}
	if b, err := os.ReadFile(netrc); err != nil || string(b) != secret+"\n" {
		t.Errorf("the hidden file changed: %q (%v)", b, err)
	}
}

// A hidden path that holds the command's own directory is refused in one
// sentence, and the command does not run.
func TestHidingTheCommandsDirectoryIsRefused(t *testing.T) {
	needSandbox(t)
	base := t.TempDir()
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	r := run(t, Policy{Dir: root, Hidden: []string{base}}, "echo RAN")
	if r.code != exitSetup || strings.Contains(r.out, "RAN") || !strings.Contains(r.out, "cannot hide "+base) || strings.Count(strings.TrimSpace(r.out), "\n") != 0 {
		t.Fatalf("hiding the command's directory: exit %d\n%s", r.code, r.out)
	}
}
