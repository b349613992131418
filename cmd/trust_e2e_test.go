package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// runEchoes runs a team whose lead asks for one command, headless, and
// returns the run and the command's tool result.
func runEchoes(t *testing.T, ws string, env []string, args ...string) (result, string) {
	t.Helper()
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo the-command-ran"}`)}},
		fakellm.Reply{Content: "done"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	r := runBin(t, ws, append(fakeEnv(srv), env...), "", append(append([]string{"run"}, args...), "go")...)
	mustSucceed(t, r, "run")
	noViolations(t, srv)
	res := toolResults(t, ws, "lead")
	if len(res) != 1 {
		t.Fatalf("tool results %q", res)
	}
	return r, res[0]
}

const untrustedSays = "the project file .agentteam/config.toml is not trusted, so this ignores its "

// TestAnUntrustedProjectCannotAllowEveryCommand: a cloned repository's
// allow = ["bash(*)"], or one rule per first letter, would turn mode ask
// into no asking at all. Until the person runs agentteam trust it does
// nothing, and run says so in one line; after, it applies; once the file
// changes, it does nothing again.
func TestAnUntrustedProjectCannotAllowEveryCommand(t *testing.T) {
	var letters []string
	for c := 'a'; c <= 'z'; c++ {
		letters = append(letters, fmt.Sprintf("%q", "bash("+string(c)+"*)"))
	}
	for _, tc := range []struct{ name, allow string }{
		{"every command", `"bash(*)"`},
		{"every first letter", strings.Join(letters, ", ")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			project := filepath.Join(ws, ".agentteam", "config.toml")
			text := "[permissions]\nallow = [" + tc.allow + "]\ndeny = [\"bash(rm *)\"]\n"
			writeConfig(t, project, text)
			env := configHome(t, "")
			held := "permissions.allow " + strings.ReplaceAll(tc.allow, ", ", ", permissions.allow ")

			r, res := runEchoes(t, ws, env, "--permission-mode", "ask")
			if !strings.Contains(res, "permission denied") || strings.HasSuffix(res, "the-command-ran\n") {
				t.Errorf("an untrusted allow rule let the command run: %q", res)
			}
			want := untrustedSays + held + "; agentteam trust shows them and applies them"
			if strings.Count(r.stderr, want) != 1 {
				t.Errorf("run does not say once what it ignored (%s):\n%s", want, r.stderr)
			}
			cfg := runBin(t, ws, env, "", "config")
			mustSucceed(t, cfg, "config")
			if !strings.Contains(cfg.stdout, "project .agentteam/config.toml, not trusted: ignored until agentteam trust") ||
				!strings.Contains(cfg.stdout, "bash(rm *)") {
				t.Errorf("config does not show the ignored rule as ignored and the deny rule as it is:\n%s", cfg.stdout)
			}

			tr := runBin(t, ws, env, "", "trust")
			mustSucceed(t, tr, "trust")
			if n := strings.Count(tr.stdout, "permissions.allow "); n != strings.Count(held, "permissions.allow ") ||
				!strings.Contains(tr.stderr, "trusted .agentteam/config.toml as it is now") {
				t.Errorf("trust shows %q, says %q", tr.stdout, tr.stderr)
			}
			home := strings.TrimPrefix(env[0], "HOME=")
			if fi, err := os.Stat(filepath.Join(home, ".local", "state", "agentteam", "trusted.json")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Fatalf("the trust record: %v, %v; want it in ~/.local/state/agentteam, mode 0600", fi, err)
			}
			r, res = runEchoes(t, ws, env, "--permission-mode", "ask")
			if !strings.HasSuffix(res, "the-command-ran\n") || strings.Contains(r.stderr, "not trusted") {
				t.Errorf("after trust: tool result %q, stderr:\n%s", res, r.stderr)
			}

			writeConfig(t, project, text+"# changed\n")
			r, res = runEchoes(t, ws, env, "--permission-mode", "ask")
			if !strings.Contains(res, "permission denied") || !strings.Contains(r.stderr, want) {
				t.Errorf("after an edit: tool result %q, stderr:\n%s", res, r.stderr)
			}

			mustSucceed(t, runBin(t, ws, env, "", "trust"), "trust again")
			list := runBin(t, ws, env, "", "trust", "--list")
			real, _ := filepath.EvalSymlinks(ws)
			if !strings.HasPrefix(list.stdout, real+" ") || strings.Count(list.stdout, "\n") != 1 {
				t.Errorf("trust --list: %q, want the workspace %s", list.stdout, real)
			}
			mustSucceed(t, runBin(t, ws, env, "", "trust", "--revoke"), "trust --revoke")
			if _, res := runEchoes(t, ws, env, "--permission-mode", "ask"); !strings.Contains(res, "permission denied") {
				t.Errorf("after --revoke the rule still applies: %q", res)
			}
		})
	}
}

// TestAnUntrustedProjectModeOnlyTightens: the person's own file says ask;
// a project file's mode = "yolo" waits for trust, while a project file's
// mode = "ask" tightens run's default at once.
func TestAnUntrustedProjectModeOnlyTightens(t *testing.T) {
	ws := t.TempDir()
	project := filepath.Join(ws, ".agentteam", "config.toml")
	writeConfig(t, project, "[permissions]\nmode = \"yolo\"\n")
	env := configHome(t, "[permissions]\nmode = \"ask\"\n")
	r, res := runEchoes(t, ws, env)
	if !strings.Contains(res, "permission denied") || !strings.Contains(r.stderr, untrustedSays+`permissions.mode = "yolo"`) {
		t.Errorf("untrusted yolo: tool result %q, stderr:\n%s", res, r.stderr)
	}
	mustSucceed(t, runBin(t, ws, env, "", "trust"), "trust")
	if _, res := runEchoes(t, ws, env); !strings.HasSuffix(res, "the-command-ran\n") {
		t.Errorf("trusted yolo: tool result %q", res)
	}

	writeConfig(t, project, "[permissions]\nmode = \"ask\"\n")
	other := configHome(t, "")
	// Another HOME has no record of the workspace's state: it adopts it.
	mustSucceed(t, runBin(t, ws, other, "", "adopt", "--yes"), "adopt")
	r, res = runEchoes(t, ws, other)
	if !strings.Contains(res, "permission denied") || strings.Contains(r.stderr, "not trusted") {
		t.Errorf("an untrusted ask over run's yolo: tool result %q, stderr:\n%s", res, r.stderr)
	}
}

// TestAnUntrustedProjectCannotLoosenTheMode: the person's file says ask; a
// cloned repository's mode = "auto-edit" would let writes run unasked.
func TestAnUntrustedProjectCannotLoosenTheMode(t *testing.T) {
	ws := t.TempDir()
	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), "[permissions]\nmode = \"auto-edit\"\n")
	env := configHome(t, "[permissions]\nmode = \"ask\"\n")
	srv := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("write_file", `{"path":"planted.txt","content":"x"}`)}},
		fakellm.Reply{Content: "done"},
	), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	r := runBin(t, ws, append(fakeEnv(srv), env...), "", "run", "go")
	mustSucceed(t, r, "run")
	if _, err := os.Stat(filepath.Join(ws, "planted.txt")); err == nil || !strings.Contains(r.stderr, untrustedSays+`permissions.mode = "auto-edit"`) {
		t.Errorf("an untrusted auto-edit let a write run unasked (%v), stderr:\n%s", err, r.stderr)
	}
}

// TestTrustWithoutAProjectFileSaysSo: nothing is recorded.
func TestTrustWithoutAProjectFileSaysSo(t *testing.T) {
	ws := t.TempDir()
	env := configHome(t, "")
	r := runBin(t, ws, env, "", "trust")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "there is no project file at .agentteam/config.toml: nothing to trust") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(strings.TrimPrefix(env[0], "HOME="), ".local", "state")); !os.IsNotExist(err) {
		t.Errorf("trust wrote state for nothing: %v", err)
	}
}

// TestAnUntrustedProjectGivesCommandsNothing: a project file's [sandbox]
// env hands commands a variable of the person's only once trusted.
func TestAnUntrustedProjectGivesCommandsNothing(t *testing.T) {
	ws := t.TempDir()
	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), "[sandbox]\nenv = [\"PROJECT_SEES\"]\n")
	env := configHome(t, "", "PROJECT_SEES=the-persons-value")
	sees := func() (result, string) {
		t.Helper()
		srv := fakellm.New(permLeadScript(
			fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo \"v=$PROJECT_SEES.\""}`)}},
			fakellm.Reply{Content: "done"},
		), fakellm.WithAPIKey("test-key"))
		defer srv.Close()
		r := runBin(t, ws, append(fakeEnv(srv), env...), "", "run", "--sandbox", "off", "--permission-mode", "yolo", "go")
		mustSucceed(t, r, "run")
		res := toolResults(t, ws, "lead")
		if len(res) != 1 {
			t.Fatalf("tool results %q", res)
		}
		return r, res[0]
	}
	r, res := sees()
	if !strings.HasSuffix(res, "\nv=.\n") || !strings.Contains(r.stderr, untrustedSays+`sandbox.env = ["PROJECT_SEES"]`) {
		t.Errorf("untrusted: the command saw %q; stderr:\n%s", res, r.stderr)
	}
	mustSucceed(t, runBin(t, ws, env, "", "trust"), "trust")
	if _, res := sees(); !strings.HasSuffix(res, "\nv=the-persons-value.\n") {
		t.Errorf("trusted: the command saw %q", res)
	}
}
