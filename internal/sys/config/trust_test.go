package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/internal/testutil/testfs"
)

// trust records the person's trust of o's project file as it is now.
func trust(t *testing.T, o Options) {
	t.Helper()
	p, err := ReadProject(o.Getenv, o.Workspace)
	if err != nil {
		t.Fatal(err)
	}
	if err := Trust(o.Getenv, p); err != nil {
		t.Fatal(err)
	}
}

func load(t *testing.T, o Options) *Config {
	t.Helper()
	c, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const widening = `[permissions]
mode = "yolo"
allow = ["bash(*)", "write_file(docs/**)"]
ask = ["bash(git push *)"]
deny = ["bash(rm *)"]
[sandbox]
network = "on"
env = ["DATABASE_URL"]
writable = ["~/"]
`

// TestAnUntrustedProjectFileWidensNothing: its allow rules, its mode and
// what it gives commands wait; its ask and deny rules apply at once.
func TestAnUntrustedProjectFileWidensNothing(t *testing.T) {
	o := setup(t, "[permissions]\ndeny = [\"bash(curl *)\"]\n", widening, nil)
	c := load(t, o)
	p := c.Permissions
	if c.Project.Trusted || len(p.Allow) != 0 || p.Mode.IsSet() {
		t.Errorf("trusted %v, allow %q, mode %+v; want nothing allowed and no mode", c.Project.Trusted, rules(p.Allow), p.Mode)
	}
	if got := rules(p.Deny); strings.Join(got, "|") != "bash(curl *) @ "+string(userSrc)+"|bash(rm *) @ "+string(projectSrc) {
		t.Errorf("deny %q, want both files' rules", got)
	}
	if got := rules(p.Ask); len(got) != 1 {
		t.Errorf("ask %q, want the project's rule", got)
	}
	if s := c.Sandbox; s.Env.IsSet() || s.Writable.IsSet() || s.Network.IsSet() {
		t.Errorf("sandbox %+v, want nothing from the project file", s)
	}
	want := []string{`permissions.allow "bash(*)"`, `permissions.allow "write_file(docs/**)"`, `permissions.mode = "yolo"`,
		`sandbox.env = ["DATABASE_URL"]`, `sandbox.writable = ["~/"]`, `sandbox.network = "on"`}
	if got := c.Held.Lines(true); !reflect.DeepEqual(got, want) {
		t.Errorf("held %q, want %q", got, want)
	}
	if c.Held.Problem != nil {
		t.Errorf("problem %v", c.Held.Problem)
	}
}

// TestATrustedProjectFileAppliesUntilItChanges: trust is bound to the
// file's bytes, so one changed character asks again.
func TestATrustedProjectFileAppliesUntilItChanges(t *testing.T) {
	o := setup(t, "", widening, nil)
	trust(t, o)
	c := load(t, o)
	if !c.Project.Trusted || !c.Held.IsEmpty() || len(c.Permissions.Allow) != 2 || c.Permissions.Mode.V != permission.ModeYolo ||
		c.Sandbox.Network.V != "on" || len(c.Sandbox.Writable.V) != 1 {
		t.Fatalf("trusted %v, held %q, permissions %+v, sandbox %+v", c.Project.Trusted, c.Held.Lines(true), c.Permissions, c.Sandbox)
	}
	testfs.WriteFile(t, ProjectPath(o.Workspace), widening+"# one more line\n")
	if c := load(t, o); c.Project.Trusted || len(c.Permissions.Allow) != 0 || len(c.Held.Allow) != 2 {
		t.Errorf("after an edit: trusted %v, allow %q, held %q", c.Project.Trusted, rules(c.Permissions.Allow), c.Held.Lines(true))
	}
	trust(t, o)
	if c := load(t, o); !c.Project.Trusted {
		t.Error("trusting the edited file did not take")
	}
	if had, err := Revoke(o.Getenv, o.Workspace); err != nil || !had {
		t.Fatalf("Revoke: %v, %v", had, err)
	}
	if c := load(t, o); c.Project.Trusted || len(c.Permissions.Allow) != 0 {
		t.Error("the trust outlived Revoke")
	}
}

// TestAProjectModeNoLooserThanTheUsersApplies: an untrusted mode waits
// only when it is looser than the user file's, or the user file has none.
func TestAProjectModeNoLooserThanTheUsersApplies(t *testing.T) {
	for _, tc := range []struct {
		user, project string
		applies       bool
	}{
		{"", "ask", true},
		{"", "auto-edit", false},
		{"", "yolo", false},
		{"yolo", "auto-edit", true},
		{"auto-edit", "auto-edit", true},
		{"ask", "auto-edit", false},
		{"auto-edit", "yolo", false},
	} {
		user := ""
		if tc.user != "" {
			user = "[permissions]\nmode = \"" + tc.user + "\"\n"
		}
		c := load(t, setup(t, user, "[permissions]\nmode = \""+tc.project+"\"\n", nil))
		applied := c.Permissions.Mode.V == permission.Mode(tc.project) && c.Permissions.Mode.From == projectSrc
		if applied != tc.applies || applied == c.Held.Mode.IsSet() {
			t.Errorf("user %q, project %q: mode %+v, held %+v; want applied %v", tc.user, tc.project, c.Permissions.Mode, c.Held.Mode, tc.applies)
		}
	}
}

// TestStricterProjectSandboxSettingsApply: network off and mode required
// need no trust.
func TestStricterProjectSandboxSettingsApply(t *testing.T) {
	c := load(t, setup(t, "[sandbox]\nnetwork = \"on\"\n", "[sandbox]\nnetwork = \"off\"\nmode = \"required\"\n", nil))
	if c.Sandbox.Network.V != "off" || c.Sandbox.Mode.V != "required" || !c.Held.IsEmpty() {
		t.Errorf("sandbox %+v, held %q", c.Sandbox, c.Held.Lines(true))
	}
}

// TestTrustIsThePersonsOwnState: the record is in XDG_STATE_HOME (or
// ~/.local/state), readable by the person alone, keyed by the workspace's
// real path; a symlink to the workspace is the same project.
func TestTrustIsThePersonsOwnState(t *testing.T) {
	state := t.TempDir()
	o := setup(t, "", widening, map[string]string{"XDG_STATE_HOME": state})
	link := filepath.Join(t.TempDir(), "link")
	testfs.Symlink(t, o.Workspace, link)
	trust(t, Options{Workspace: link, Getenv: o.Getenv})
	path := filepath.Join(state, "agentteam", "trusted.json")
	if TrustPath(o.Getenv) != path {
		t.Fatalf("TrustPath %q, want %q", TrustPath(o.Getenv), path)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("trust file: %v, %v; want mode 0600", fi, err)
	}
	if c := load(t, o); !c.Project.Trusted {
		t.Error("trust through a symlink did not reach the workspace")
	}
	list, err := TrustedProjects(o.Getenv)
	real, _ := filepath.EvalSymlinks(o.Workspace)
	if err != nil || len(list) != 1 || list[0].Workspace != real || len(list[0].SHA256) != 64 {
		t.Errorf("TrustedProjects: %+v, %v", list, err)
	}
	home := map[string]string{"HOME": "/h"}
	if got := TrustPath(func(k string) string { return home[k] }); got != "/h/.local/state/agentteam/trusted.json" {
		t.Errorf("TrustPath without XDG_STATE_HOME: %q", got)
	}
}

// TestABrokenTrustFileTrustsNothing: the project counts as untrusted and
// the reason is kept for the command to say.
func TestABrokenTrustFileTrustsNothing(t *testing.T) {
	o := setup(t, "", widening, nil)
	trust(t, o)
	testfs.WriteFile(t, TrustPath(o.Getenv), "{not json")
	c := load(t, o)
	if c.Project.Trusted || len(c.Permissions.Allow) != 0 || c.Held.Problem == nil || !strings.Contains(c.Held.Problem.Error(), "not valid JSON") {
		t.Errorf("trusted %v, allow %q, problem %v", c.Project.Trusted, rules(c.Permissions.Allow), c.Held.Problem)
	}
}

// TestThePersonsOwnRuleKeepsTrust: AddAllowRule keeps a trusted file
// trusted, and a file that asked no trust; a file that waits for trust
// keeps waiting, the new rule with it.
func TestThePersonsOwnRuleKeepsTrust(t *testing.T) {
	rule := permission.MustParseRule("bash(make)")
	o := setup(t, "", "[team]\nmax_workers = 2\n", nil)
	if applies, err := AddAllowRule(o.Getenv, o.Workspace, rule); err != nil || !applies {
		t.Fatalf("AddAllowRule to a file that needed no trust: %v, %v", applies, err)
	}
	if c := load(t, o); !c.Project.Trusted || len(c.Permissions.Allow) != 1 {
		t.Errorf("trusted %v, allow %q", c.Project.Trusted, rules(c.Permissions.Allow))
	}
	o = setup(t, "", widening, nil)
	if applies, err := AddAllowRule(o.Getenv, o.Workspace, rule); err != nil || applies {
		t.Fatalf("AddAllowRule to an untrusted file: %v, %v; want it to wait", applies, err)
	}
	if c := load(t, o); c.Project.Trusted || len(c.Permissions.Allow) != 0 || len(c.Held.Allow) != 3 {
		t.Errorf("trusted %v, allow %q, held %q", c.Project.Trusted, rules(c.Permissions.Allow), c.Held.Lines(true))
	}
}
