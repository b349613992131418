package config

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/internal/testutil/testfs"
)

func rules(es []permission.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Rule.String()+" @ "+e.From)
	}
	return out
}

func TestPermissionsMergeBothFiles(t *testing.T) {
	user := "[permissions]\nmode = \"yolo\"\ntimeout = \"2m\"\nallow = [\"bash(go test *)\"]\ndeny = [\"bash(rm *)\"]\n"
	project := "[permissions]\nmode = \"auto-edit\"\nallow = [\"write_file(docs/**)\"]\nask = [\"bash(git push *)\"]\n"
	o := setup(t, user, project, nil)
	trust(t, o)
	c, err := Load(o)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Permissions
	if p.Mode.V != permission.ModeAutoEdit || p.Mode.From != projectSrc {
		t.Errorf("mode %+v, want auto-edit from the project file", p.Mode)
	}
	if p.Timeout.V != 2*time.Minute || p.Timeout.From != userSrc {
		t.Errorf("timeout %+v, want 2m from the user file", p.Timeout)
	}
	want := []string{"bash(go test *) @ " + string(userSrc), "write_file(docs/**) @ " + string(projectSrc)}
	if got := rules(p.Allow); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("allow %q, want %q", got, want)
	}
	if got := rules(p.Deny); len(got) != 1 || got[0] != "bash(rm *) @ "+string(userSrc) {
		t.Errorf("deny %q", got)
	}
	if got := rules(p.Ask); len(got) != 1 || got[0] != "bash(git push *) @ "+string(projectSrc) {
		t.Errorf("ask %q", got)
	}
}

func TestBadPermissionsAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		project    bool
		says       string
	}{
		{"an unknown mode", "[permissions]\nmode = \"careful\"\n", false, "permissions.mode must be \"ask\", \"auto-edit\" or \"yolo\""},
		{"a rule that does not parse", "[permissions]\nallow = [\"bash(go test\"]\n", false, "permissions.allow rule \"bash(go test\": the pattern must end"},
		{"a rule that is not a string", "[permissions]\ndeny = [1]\n", false, "permissions.deny"},
		{"a bad timeout", "[permissions]\ntimeout = \"soon\"\n", false, "permissions.timeout must be a positive duration"},
		{"an unknown key, with the keys it may have", "[permissions]\nmodes = \"ask\"\n", false, "in [permissions]: allow, ask, deny, mode, timeout"},
		{"a bad rule in a project file", "[permissions]\ndeny = [\"bash(\"]\n", true, "permissions.deny rule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			user, project := tc.text, ""
			if tc.project {
				user, project = "", tc.text
			}
			_, err := Load(setup(t, user, project, nil))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("Load: %v, want it to say %q", err, tc.says)
			}
		})
	}
}

func TestAddAllowRuleKeepsTheFile(t *testing.T) {
	rule := permission.MustParseRule(`bash(go test "./...")`)
	for _, tc := range []struct {
		name, before string
		keeps        string
	}{
		{"no file", "", ""},
		{"a file without the table", "# mine\nprovider = \"x\"\n[providers.x]\nmodel = \"m\"\n", "# mine\nprovider = \"x\"\n"},
		{"a table without allow", "[permissions]\nmode = \"ask\" # careful\n\n[team]\nmax_workers = 2\n", "mode = \"ask\" # careful"},
		{"a table with a list", "[permissions]\ndeny = [\"bash(rm *)\"]\nallow = [\n  \"bash(ls)\", # look\n]\n", "\"bash(ls)\", # look"},
		{"an empty list", "[permissions]\nallow=[]\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := setup(t, "", tc.before, nil)
			if tc.before == "" {
				_ = os.Remove(ProjectPath(o.Workspace))
			} else {
				trust(t, o)
			}
			for range 2 { // the second time changes nothing
				if applies, err := AddAllowRule(o.Getenv, o.Workspace, rule); err != nil || !applies {
					t.Fatalf("AddAllowRule: %v, %v; want it to apply in a trusted file", applies, err)
				}
			}
			data, err := os.ReadFile(ProjectPath(o.Workspace))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), tc.keeps) {
				t.Errorf("the file lost %q:\n%s", tc.keeps, data)
			}
			c, err := Load(o)
			if err != nil {
				t.Fatalf("the file no longer loads: %v\n%s", err, data)
			}
			n := 0
			for _, e := range c.Permissions.Allow {
				if e.Rule == rule {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("the rule is in allow %d times, want once:\n%s", n, data)
			}
		})
	}
}

func TestAddAllowRuleRefusesALinkedFile(t *testing.T) {
	o := setup(t, "", "", nil)
	outside, unchanged := testfs.OutsideFile(t)
	_ = os.Remove(ProjectPath(o.Workspace))
	testfs.Symlink(t, outside, ProjectPath(o.Workspace))
	if _, err := AddAllowRule(o.Getenv, o.Workspace, permission.MustParseRule("bash(ls)")); err == nil {
		t.Fatal("a rule was written through a link")
	}
	unchanged()
}
