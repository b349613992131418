package natsconn_test

import (
	"os"
	"testing"

	"github.com/agentteam/agentteam/internal/store/natsconn"
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
		got, err := natsconn.CredsDir(func(k string) string { return tc.env[k] })
		if got != tc.want || (tc.want == "") != (err != nil) {
			t.Errorf("%v: %q, %v; want %q", tc.env, got, err, tc.want)
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
	lead := touch(natsconn.CredsFile(dir, ""))
	if got := natsconn.FindRoleCreds(dir, "alpha", natsconn.RoleWorker); got != lead {
		t.Errorf("a worker with the lead's file alone: %q", got)
	}
	every := touch(natsconn.RoleCredsFile(dir, "", natsconn.RoleWorker))
	if got := natsconn.FindRoleCreds(dir, "alpha", natsconn.RoleWorker); got != every {
		t.Errorf("a worker with every team's worker file: %q", got)
	}
	alpha := touch(natsconn.RoleCredsFile(dir, "alpha", natsconn.RoleWorker))
	if got := natsconn.FindRoleCreds(dir, "alpha", natsconn.RoleWorker); got != alpha {
		t.Errorf("a worker with alpha's worker file: %q", got)
	}
	if got := natsconn.FindRoleCreds(dir, "alpha", natsconn.RoleLead); got != lead {
		t.Errorf("the lead: %q", got)
	}
	// A team named alpha-worker has a file of its own, not alpha's worker's.
	if natsconn.CredsFile(dir, "alpha-worker") == alpha {
		t.Error("team alpha-worker's file is alpha's worker's")
	}
}
