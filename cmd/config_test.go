package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/testutil/testfs"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/handoff"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/worktree"
)

// configFiles makes a fake HOME and a workspace, writes the user and the
// project config file where their text is not empty, and returns the
// environment (HOME only) and the workspace.
func configFiles(t *testing.T, user, project string) (map[string]string, string) {
	t.Helper()
	home, ws := t.TempDir(), t.TempDir()
	testfs.WriteFile(t, filepath.Join(home, ".config", "agentteam", "config.toml"), user)
	testfs.WriteFile(t, filepath.Join(ws, ".agentteam", "config.toml"), project)
	return map[string]string{"HOME": home}, ws
}

const (
	userConfig = `
provider = "main"
[providers.main]
base_url = "http://user.example/v1"
api_key_env = "USER_KEY"
model = "user-model"
[roles]
reviewer = "main/big-model"
[team]
max_workers = 3
max_turns = 9
shutdown_timeout = "7s"
auto_claim = true
git_remote = "team"
`
	projectConfig = `
[providers.main]
model = "project-model"
stream = false
[team]
max_workers = 2
plan_timeout = "8s"
isolation = "worktree"
`
	userSrc    = "user ~/.config/agentteam/config.toml"
	projectSrc = "project .agentteam/config.toml"
)

// layered are the Options a config file can change.
type layered struct {
	Model, BaseURL, KeyEnv string
	NoStream               bool
	MaxWorkers, MaxQueue   int
	Team                   launch.TeamFlags
	AutoClaim              bool
	HasConfig              bool
}

func layeredOf(o any) layered {
	g := globalsOf(o)
	l := layered{Model: g.Model, BaseURL: g.BaseURL, KeyEnv: g.KeyEnv, NoStream: g.NoStream,
		MaxWorkers: g.MaxWorkers, MaxQueue: g.MaxQueue, HasConfig: g.Config != nil}
	switch o := o.(type) {
	case *RunOptions:
		l.Team, l.AutoClaim = o.TeamFlags, o.AutoClaim
	case *ChatOptions:
		l.Team = o.TeamFlags
	}
	return l
}

// TestConfigFilesLayerUnderEnvAndFlags: flags > environment > project file >
// user file > defaults, for run's and chat's Options.
func TestConfigFilesLayerUnderEnvAndFlags(t *testing.T) {
	today := layered{Model: launch.DefaultModel, MaxWorkers: 5, MaxQueue: 50, Team: teamDefaults}
	fromUser := layered{Model: "user-model", BaseURL: "http://user.example/v1", KeyEnv: "USER_KEY",
		MaxWorkers: 3, MaxQueue: 50, AutoClaim: true, HasConfig: true,
		Team: launch.TeamFlags{MaxTurns: 9, ShutdownTimeout: 7 * time.Second, PlanTimeout: protocol.DefaultPlanTimeout, HandoffTimeout: handoff.DefaultTimeout, Isolation: worktree.IsolationNone, GitRemote: "team", Sandbox: "auto", SandboxNetwork: "on"}}
	fromBoth := fromUser
	fromBoth.Model, fromBoth.NoStream, fromBoth.MaxWorkers, fromBoth.Team.PlanTimeout = "project-model", true, 2, 8*time.Second
	fromBoth.Team.Isolation = worktree.IsolationWorktree

	cases := []struct {
		name          string
		user, project string
		env           map[string]string
		noWorkspace   bool // the workspace comes from AGENTTEAM_WORKSPACE
		args          []string
		want          layered
	}{
		{name: "no file: today's defaults", args: []string{"run", "go"}, want: today},
		{name: "the user file", user: userConfig, args: []string{"run", "go"}, want: fromUser},
		{name: "the project file wins over the user file, key by key",
			user: userConfig, project: projectConfig, args: []string{"run", "go"}, want: fromBoth},
		{name: "the project file alone", project: projectConfig, args: []string{"run", "go"},
			want: layered{Model: "project-model", NoStream: true, MaxWorkers: 2, MaxQueue: 50, HasConfig: true,
				Team: launch.TeamFlags{MaxTurns: team.DefaultMaxTurns, ShutdownTimeout: protocol.DefaultShutdownTimeout, PlanTimeout: 8 * time.Second, HandoffTimeout: handoff.DefaultTimeout, Isolation: worktree.IsolationWorktree, GitRemote: "origin", Sandbox: "auto", SandboxNetwork: "on"}}},
		{name: "the environment wins over the files",
			user: userConfig, project: projectConfig,
			env:  map[string]string{"AGENTTEAM_MODEL": "env-model", "OPENAI_BASE_URL": "http://env.example/v1"},
			args: []string{"run", "go"},
			want: func() layered { l := fromBoth; l.Model, l.BaseURL = "env-model", "http://env.example/v1"; return l }()},
		{name: "flags win over everything",
			user: userConfig, project: projectConfig,
			env: map[string]string{"AGENTTEAM_MODEL": "env-model"},
			args: []string{"run", "--model", "flag-model", "--base-url", "http://flag.example/v1", "--max-workers", "4", "--max-queue", "1",
				"--max-turns", "5", "--shutdown-timeout", "1s", "--plan-timeout", "2s", "--handoff-timeout", "3s", "--auto-claim=false", "--no-stream=false", "--isolation", "none", "--git-remote", "flag-remote", "go"},
			want: layered{Model: "flag-model", BaseURL: "http://flag.example/v1", KeyEnv: "USER_KEY", MaxWorkers: 4, MaxQueue: 1, HasConfig: true,
				Team: launch.TeamFlags{MaxTurns: 5, ShutdownTimeout: time.Second, PlanTimeout: 2 * time.Second, HandoffTimeout: 3 * time.Second, Isolation: worktree.IsolationNone, GitRemote: "flag-remote", Sandbox: "auto", SandboxNetwork: "on"}}},
		{name: "--demo ignores the providers but keeps the team defaults",
			user: userConfig, project: projectConfig, args: []string{"run", "--demo", "go"},
			want: func() layered {
				l := fromBoth
				l.Model, l.BaseURL, l.KeyEnv, l.NoStream = launch.DefaultModel, "", "", false
				return l
			}()},
		{name: "AGENTTEAM_WORKSPACE finds the project file",
			project: projectConfig, noWorkspace: true, args: []string{"run", "go"},
			want: layered{Model: "project-model", NoStream: true, MaxWorkers: 2, MaxQueue: 50, HasConfig: true,
				Team: launch.TeamFlags{MaxTurns: team.DefaultMaxTurns, ShutdownTimeout: protocol.DefaultShutdownTimeout, PlanTimeout: 8 * time.Second, HandoffTimeout: handoff.DefaultTimeout, Isolation: worktree.IsolationWorktree, GitRemote: "origin", Sandbox: "auto", SandboxNetwork: "on"}}},
		{name: "chat layers the same way (it has no --auto-claim)",
			user: userConfig, project: projectConfig, args: []string{"chat"},
			want: func() layered { l := fromBoth; l.AutoClaim = false; return l }()},
		{name: "the sandbox's settings: the project file may make it stricter, a flag wins",
			user: userConfig + "[sandbox]\nmode = \"off\"\nnetwork = \"on\"\n", project: "[sandbox]\nmode = \"required\"\n",
			args: []string{"run", "--sandbox-network", "off", "go"},
			want: func() layered {
				l := fromUser
				l.Team.Sandbox, l.Team.SandboxNetwork = "required", "off"
				return l
			}()},
		{name: "chat: flags win", user: userConfig, args: []string{"chat", "--max-turns", "2", "--model", "m"},
			want: func() layered { l := fromUser; l.AutoClaim, l.Team.MaxTurns, l.Model = false, 2, "m"; return l }()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, ws := configFiles(t, tc.user, tc.project)
			for k, v := range tc.env {
				env[k] = v
			}
			args := tc.args
			if tc.noWorkspace {
				env["AGENTTEAM_WORKSPACE"] = ws
			} else {
				args = append([]string{"--workspace", ws}, args...)
			}
			c, err := executeHooked(t, env, "", args...)
			if err != nil {
				t.Fatalf("agentteam %q: %v", args, err)
			}
			if got := layeredOf(c.opts); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("agentteam %q:\n got %+v\nwant %+v", args, got, tc.want)
			}
		})
	}
}

// TestABadConfigStopsOnlyTheCommandsThatUseIt: run and chat exit 2 with the
// file's sentence before running; the commands that only read the team's
// files do not read the config.
func TestABadConfigStopsOnlyTheCommandsThatUseIt(t *testing.T) {
	env, ws := configFiles(t, "", "[team]\nmax_workers = -1\n")
	for _, args := range [][]string{{"run", "go"}, {"chat"}, {"config"}, {"models"}} {
		c, err := executeHooked(t, env, "", append([]string{"--workspace", ws}, args...)...)
		if code := exit.Code(err); code != exit.Usage || c.calls != 0 {
			t.Fatalf("%q: exit %d (%v), ran %d times", args, code, err, c.calls)
		}
		want := "config file " + filepath.Join(ws, ".agentteam", "config.toml") + ", line 2: team.max_workers must be at least 1, not -1"
		if err.Error() != want {
			t.Errorf("%q: %q, want %q", args, err, want)
		}
	}
	for _, args := range [][]string{{"team"}, {"tasks"}, {"inbox"}, {"send", "--to", "a", "x"}, {"version"}} {
		c, err := executeHooked(t, env, "", append([]string{"--workspace", ws}, args...)...)
		if err != nil || c.calls != 1 {
			t.Errorf("%q with a bad config: %v, ran %d times", args, err, c.calls)
		}
	}
	// config --path shows where the file to fix is.
	if out, err := runConfigCmd(t, env, "--workspace", ws, "--path"); err != nil || !strings.Contains(out, " found") {
		t.Errorf("config --path with a bad config: %v\n%s", err, out)
	}
}

// runConfigCmd runs `agentteam config ...` in-process for real.
func runConfigCmd(t *testing.T, env map[string]string, args ...string) (stdout string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCmd(IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb}, func(k string) string { return env[k] }, rootOpts{})
	root.SetArgs(append([]string{"config"}, args...))
	err = root.ExecuteContext(context.Background())
	if errb.Len() > 0 {
		t.Errorf("config wrote to stderr: %s", errb.String())
	}
	return out.String(), err
}

var columns = regexp.MustCompile(`\s{2,}`)

func TestConfigPrintsEachSettingAndItsSource(t *testing.T) {
	const secret = "sk-user-key-never-printed-0123"
	env, ws := configFiles(t, userConfig+"[providers.main.headers]\nX-Title = \"agentteam\"\n", projectConfig)
	env["USER_KEY"] = secret
	env["OPENAI_BASE_URL"] = "http://env.example/v1"
	stdout, err := runConfigCmd(t, env, "--workspace", ws, "--max-queue", "7")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][2]string{}
	var order []string
	for _, line := range strings.Split(strings.TrimRight(stdout, "\n"), "\n") {
		f := columns.Split(line, -1)
		if len(f) != 3 {
			t.Fatalf("line %q is not name, value, source", line)
		}
		got[f[0]] = [2]string{f[1], f[2]}
		order = append(order, f[0])
	}
	want := map[string][2]string{
		"workspace":                {ws, "flag"},
		"provider":                 {"main", userSrc},
		"model":                    {"project-model", projectSrc},
		"base_url":                 {"http://env.example/v1", "env OPENAI_BASE_URL"},
		"api_key_env":              {"USER_KEY (set)", userSrc},
		"stream":                   {"false", projectSrc},
		"headers.X-Title":          {"agentteam", userSrc},
		"api_key_header":           {"(not set)", "default"},
		"idle_timeout":             {"2m0s", "default"},
		"models":                   {"(not set)", "default"},
		"max_output_tokens":        {"(not set)", "default"},
		"reasoning_effort":         {"(not set)", "default"},
		"price_input_per_million":  {"(not set)", "default"},
		"price_output_per_million": {"(not set)", "default"},
		"team.max_workers":         {"2", projectSrc},
		"team.max_queue":           {"7", "flag"},
		"team.max_turns":           {"9", userSrc},
		"team.shutdown_timeout":    {"7s", userSrc},
		"team.plan_timeout":        {"8s", projectSrc},
		"team.handoff_timeout":     {handoff.DefaultTimeout.String(), "default"},
		"team.auto_claim":          {"true", userSrc},
		"team.isolation":           {"worktree", projectSrc},
		"team.git_remote":          {"team", userSrc},
		"team.max_model_calls":     {"0", "default"},
		"team.max_tokens":          {"0", "default"},
		"team.max_cost":            {"0", "default"},
		"sandbox.mode":             {"auto", "default"},
		"sandbox.network":          {"on", "default"},
		"sandbox.env":              {"(not set)", "default"},
		"sandbox.writable":         {"(not set)", "default"},
		"sandbox.read_hidden":      {"(not set)", "default"},
		"context.files":            {"(not set)", "default"},
		"context.max_bytes":        {"(not set)", "default"},
		"roles.reviewer":           {"main/big-model", userSrc},
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: got %q, want %q", name, got[name], w)
		}
	}
	if len(got) != len(want) || order[0] != "workspace" || order[len(order)-1] != "roles.reviewer" {
		t.Errorf("lines %v", order)
	}
	if strings.Contains(stdout, secret) {
		t.Fatal("config printed the API key")
	}

	// --json: the same settings.
	stdout, err = runConfigCmd(t, env, "--workspace", ws, "--max-queue", "7", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var settings []struct {
		Name   string `json:"name"`
		Value  any    `json:"value"`
		Source string `json:"source"`
		Set    *bool  `json:"set"`
	}
	if err := json.Unmarshal([]byte(stdout), &settings); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if len(settings) != len(want) || strings.Contains(stdout, secret) {
		t.Fatalf("json settings: %s", stdout)
	}
	for _, s := range settings {
		if s.Source != want[s.Name][1] {
			t.Errorf("json %s: source %q, want %q", s.Name, s.Source, want[s.Name][1])
		}
		switch s.Name {
		case "api_key_env":
			if s.Value != "USER_KEY" || s.Set == nil || !*s.Set {
				t.Errorf("json api_key_env %+v", s)
			}
		case "team.max_workers":
			if s.Value != float64(2) {
				t.Errorf("json team.max_workers %v is not the number 2", s.Value)
			}
		case "stream":
			if s.Value != false {
				t.Errorf("json stream %v", s.Value)
			}
		case "max_output_tokens":
			if s.Value != nil {
				t.Errorf("json max_output_tokens %v", s.Value)
			}
		}
	}
}

func TestConfigWithoutFilesShowsTodaysDefaultsAndWritesNothing(t *testing.T) {
	env, ws := configFiles(t, "", "")
	stdout, err := runConfigCmd(t, env, "--workspace", ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"provider (not set) default",
		"model " + launch.DefaultModel + " default",
		"base_url " + launch.DefaultBaseURL + " default",
		"api_key_env OPENAI_API_KEY (not set) default",
		"stream true default",
		"team.max_workers 5 default",
	} {
		if !strings.Contains(columns.ReplaceAllString(stdout, " "), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 0 {
		t.Errorf("config wrote into the workspace: %v", entries)
	}

	stdout, err = runConfigCmd(t, env, "--workspace", ws, "--path")
	if err != nil {
		t.Fatal(err)
	}
	wantPaths := "user " + filepath.Join(env["HOME"], ".config/agentteam/config.toml") + " not found\n" +
		"project " + filepath.Join(ws, ".agentteam/config.toml") + " not found\n"
	if got := columns.ReplaceAllString(stdout, " "); got != wantPaths {
		t.Errorf("--path:\n%s\nwant\n%s", got, wantPaths)
	}
	if entries, _ := os.ReadDir(ws); len(entries) != 0 {
		t.Errorf("config --path wrote into the workspace: %v", entries)
	}
}

func TestConfigDemo(t *testing.T) {
	env, ws := configFiles(t, userConfig, "")
	stdout, err := runConfigCmd(t, env, "--workspace", ws, "--demo")
	if err != nil {
		t.Fatal(err)
	}
	out := columns.ReplaceAllString(stdout, " ")
	if !strings.Contains(out, "demo true flag") || strings.Contains(out, "user-model") || !strings.Contains(out, "team.max_workers 3 "+userSrc) {
		t.Errorf("config --demo:\n%s", stdout)
	}
}
