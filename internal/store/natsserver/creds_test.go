package natsserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsserver"
)

// Processes making the credentials at once agree on one seed, written
// 0600 in a directory made 0700; the file of one team is found before
// the one of every team.
func TestMakeCredsOnceAndPrivately(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "agentteam")
	path := natsconn.CredsFile(dir, "")
	var wg sync.WaitGroup
	pubs := make([]string, 8)
	errs := make([]error, 8)
	for i := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pubs[i], errs[i] = natsserver.MakeCreds(path)
		}()
	}
	wg.Wait()
	for i := range pubs {
		if errs[i] != nil || pubs[i] != pubs[0] || !nkeys.IsValidPublicUserKey(pubs[i]) {
			t.Fatalf("maker %d: %q, %v; maker 0: %q", i, pubs[i], errs[i], pubs[0])
		}
	}
	for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, %v; want %04o", p, fi.Mode(), err, want)
		}
	}
	if got := natsconn.FindCreds(dir, "alpha"); got != path {
		t.Errorf("FindCreds without alpha's file = %q, want %q", got, path)
	}
	alpha := natsconn.CredsFile(dir, "alpha")
	if _, err := natsserver.MakeCreds(alpha); err != nil {
		t.Fatal(err)
	}
	if got := natsconn.FindCreds(dir, "alpha"); got != alpha {
		t.Errorf("FindCreds = %q, want alpha's %q", got, alpha)
	}
	if got := natsconn.FindCreds(t.TempDir(), "alpha"); got != "" {
		t.Errorf("FindCreds in an empty directory = %q", got)
	}
}

// What MakeCreds refuses, each in a sentence: a state directory that is a
// link, a file others may read, a file with a password in it.
func TestMakeCredsRefuses(t *testing.T) {
	base := t.TempDir()
	link := filepath.Join(base, "link")
	if err := os.Symlink(t.TempDir(), link); err != nil {
		t.Fatal(err)
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	loose, password := filepath.Join(base, "loose"), filepath.Join(base, "password")
	for p, f := range map[string]struct {
		content string
		mode    os.FileMode
	}{loose: {string(seed), 0o644}, password: {"alice s3cret\n", 0o600}} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(natsconn.CredsFile(p, ""), []byte(f.content), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(natsconn.CredsFile(p, ""), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ dir, says string }{
		{link, "is not a directory (a link?)"},
		{loose, "chmod 600"},
		{password, "not the nkey seed"},
	} {
		_, err := natsserver.MakeCreds(natsconn.CredsFile(tc.dir, ""))
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v; want a sentence saying %q", tc.dir, err, tc.says)
		}
	}
}
