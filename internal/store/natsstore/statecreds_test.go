package natsstore_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/agentteam/agentteam/internal/store/natsstore"
)

func TestCredsDirFollowsXDGThenHome(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/x/state", "HOME": "/home/u"}, "/x/state/agentteam"},
		{map[string]string{"XDG_STATE_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/state/agentteam"},
		{map[string]string{"HOME": "/home/u"}, "/home/u/.local/state/agentteam"},
		{map[string]string{}, ""},
	} {
		got, err := natsstore.CredsDir(func(k string) string { return tc.env[k] })
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("%v: %q, %v; want %q", tc.env, got, err, tc.want)
		}
	}
}

// Processes making the credentials at once agree on one seed, written
// 0600 in a directory made 0700; the file of one team is found before
// the one of every team.
func TestMakeCredsOnceAndPrivately(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "agentteam")
	path := natsstore.CredsFile(dir, "")
	var wg sync.WaitGroup
	pubs := make([]string, 8)
	errs := make([]error, 8)
	for i := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pubs[i], errs[i] = natsstore.MakeCreds(path)
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
	if got := natsstore.FindCreds(dir, "alpha"); got != path {
		t.Errorf("FindCreds without alpha's file = %q, want %q", got, path)
	}
	alpha := natsstore.CredsFile(dir, "alpha")
	if _, err := natsstore.MakeCreds(alpha); err != nil {
		t.Fatal(err)
	}
	if got := natsstore.FindCreds(dir, "alpha"); got != alpha {
		t.Errorf("FindCreds = %q, want alpha's %q", got, alpha)
	}
	if got := natsstore.FindCreds(t.TempDir(), "alpha"); got != "" {
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
		if err := os.WriteFile(natsstore.CredsFile(p, ""), []byte(f.content), f.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(natsstore.CredsFile(p, ""), f.mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ dir, says string }{
		{link, "is not a directory (a link?)"},
		{loose, "chmod 600"},
		{password, "not the nkey seed"},
	} {
		_, err := natsstore.MakeCreds(natsstore.CredsFile(tc.dir, ""))
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v; want a sentence saying %q", tc.dir, err, tc.says)
		}
	}
}

// A worker or a person finds its role's file, of its team before every
// team's, and else the lead's; a lead never takes another role's.
func TestFindRoleCreds(t *testing.T) {
	dir := t.TempDir()
	touch := func(p string) string {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lead := touch(natsstore.CredsFile(dir, ""))
	if got := natsstore.FindRoleCreds(dir, "alpha", natsstore.RoleWorker); got != lead {
		t.Errorf("a worker with the lead's file alone: %q", got)
	}
	every := touch(natsstore.RoleCredsFile(dir, "", natsstore.RoleWorker))
	if got := natsstore.FindRoleCreds(dir, "alpha", natsstore.RoleWorker); got != every {
		t.Errorf("a worker with every team's worker file: %q", got)
	}
	alpha := touch(natsstore.RoleCredsFile(dir, "alpha", natsstore.RoleWorker))
	if got := natsstore.FindRoleCreds(dir, "alpha", natsstore.RoleWorker); got != alpha {
		t.Errorf("a worker with alpha's worker file: %q", got)
	}
	if got := natsstore.FindRoleCreds(dir, "alpha", natsstore.RoleLead); got != lead {
		t.Errorf("the lead: %q", got)
	}
	// A team named alpha-worker has a file of its own, not alpha's worker's.
	if natsstore.CredsFile(dir, "alpha-worker") == alpha {
		t.Error("team alpha-worker's file is alpha's worker's")
	}
}
