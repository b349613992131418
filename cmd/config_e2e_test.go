package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testfs"
)

// configHome is an environment whose user config file is home's own (never
// the real user's), plus extra.
func configHome(t *testing.T, user string, extra ...string) []string {
	t.Helper()
	home := t.TempDir()
	if user != "" {
		writeConfig(t, filepath.Join(home, ".config", "agentteam", "config.toml"), user)
	}
	return append([]string{"HOME=" + home, "XDG_CONFIG_HOME="}, extra...)
}

var writeConfig = testfs.WriteFile

// TestRunUsesTheProjectConfig: a project file alone points run at the
// server, names the key's variable, picks the model, turns streaming off and
// bounds the pool to one worker.
func TestRunUsesTheProjectConfig(t *testing.T) {
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{ToolCalls: []fakellm.ToolCall{
			call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"work"}`),
			call("spawn_teammate", `{"name":"bob","role":"programmer","prompt":"work"}`),
			call("spawn_teammate", `{"name":"carol","role":"programmer","prompt":"work"}`),
		}}},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "lead" {
			return fakellm.Reply{Content: "the team is done"}
		}
		return fakellm.Reply{Content: c.Agent + " done", Delay: 100 * time.Millisecond}
	})
	srv := fakellm.New(script, fakellm.WithAPIKey("config-key"))
	defer srv.Close()
	ws := t.TempDir()
	// Where requests go and which key they carry: only the user's own file.
	user := fmt.Sprintf("[providers.fake]\nbase_url = %q\napi_key_env = \"FAKE_KEY\"\n", srv.URL())
	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), `
[providers.fake]
model = "project-model"
stream = false

[team]
max_workers = 1
`)

	// No OPENAI_API_KEY, no OPENAI_BASE_URL, no AGENTTEAM_MODEL: all from the files.
	r := runBin(t, ws, configHome(t, user, "FAKE_KEY=config-key"), "", "run", "--quiet", "build it")
	if r.code != 0 {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("protocol violations: %v", v)
	}
	if strings.TrimSpace(r.stdout) != "the team is done" {
		t.Errorf("stdout %q", r.stdout)
	}
	calls := srv.Calls()
	for _, c := range calls {
		if c.Req.Model != "project-model" || c.Stream {
			t.Errorf("%s's call %d asked for model %q, stream %v; want project-model, not streamed", c.Agent, c.N, c.Req.Model, c.Stream)
		}
	}
	for _, mate := range []string{"alice", "bob", "carol"} {
		if srv.CallsFor(mate) == 0 {
			t.Errorf("%s never ran", mate)
		}
	}
	if peak := srv.MaxInFlight(func(a string) bool { return a != "lead" }); peak != 1 {
		t.Errorf("%d teammates ran model turns at once; the project file says max_workers = 1", peak)
	}
}

// TestModelPrecedenceThroughTheBinary: flag > environment > project file >
// user file, as the model the server is asked for.
func TestModelPrecedenceThroughTheBinary(t *testing.T) {
	cases := []struct {
		name          string
		user, project string
		env           []string
		args          []string
		want          string
	}{
		{name: "user file", user: "user-model", want: "user-model"},
		{name: "project over user", user: "user-model", project: "project-model", want: "project-model"},
		{name: "environment over files", user: "user-model", project: "project-model",
			env: []string{"AGENTTEAM_MODEL=env-model"}, want: "env-model"},
		{name: "--model over everything", user: "user-model", project: "project-model",
			env: []string{"AGENTTEAM_MODEL=env-model"}, args: []string{"--model", "cli-model"}, want: "cli-model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}), fakellm.WithAPIKey("test-key"))
			defer srv.Close()
			ws := t.TempDir()
			user := ""
			if tc.user != "" {
				user = fmt.Sprintf("[providers.fake]\nbase_url = %q\nmodel = %q\n", srv.URL(), tc.user)
			}
			if tc.project != "" {
				writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), fmt.Sprintf("[providers.fake]\nmodel = %q\n", tc.project))
			}
			env := configHome(t, user, append([]string{"OPENAI_API_KEY=test-key"}, tc.env...)...)
			r := runBin(t, ws, env, "", append(append([]string{"run", "--quiet"}, tc.args...), "go")...)
			if r.code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
			}
			reqs := srv.Requests("lead")
			if len(reqs) == 0 {
				t.Fatal("the lead sent no request")
			}
			if reqs[0].Model != tc.want {
				t.Errorf("the lead asked for model %q, want %q", reqs[0].Model, tc.want)
			}
		})
	}
}

// TestALiteralKeyIsRefusedThroughTheBinary: run and chat exit 2 with one
// sentence naming the file and line, never print the key, reach no server
// and write nothing.
func TestALiteralKeyIsRefusedThroughTheBinary(t *testing.T) {
	const secret = "sk-proj-literal-secret-0123456789"
	srv := fakellm.New(fakellm.Always(fakellm.Reply{Content: "ok"}))
	defer srv.Close()
	ws := t.TempDir()
	path := filepath.Join(ws, ".agentteam", "config.toml")
	writeConfig(t, path, fmt.Sprintf("[providers.openai]\nbase_url = %q\napi_key = %q\n", srv.URL(), secret))
	for _, args := range [][]string{{"run", "go"}, {"chat"}, {"config"}, {"models"}} {
		r := runBin(t, ws, configHome(t, "", "OPENAI_API_KEY=test-key"), "", args...)
		// The workspace is ".", so the path is relative to where the user stands.
		want := "agentteam: config file .agentteam/config.toml, line 3: providers.openai.api_key would put an API key in the project's files, which get committed"
		if r.code != exit.Usage || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q…", args, r.code, r.stderr, want)
		}
		if strings.Contains(r.stdout+r.stderr, secret) {
			t.Fatalf("%q printed the key", args)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the server got %d calls", n)
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, ".agentteam")); len(entries) != 1 {
		t.Errorf(".agentteam holds %v, want only config.toml", entries)
	}
}

// TestConfigThroughTheBinary: the effective settings with their sources.
func TestConfigThroughTheBinary(t *testing.T) {
	ws := t.TempDir()
	writeConfig(t, filepath.Join(ws, ".agentteam", "config.toml"), "[providers.p]\nmodel = \"project-model\"\n[team]\nmax_workers = 2\n")
	env := configHome(t, "[providers.p]\napi_key_env = \"P_KEY\"\n[team]\nmax_turns = 9\n",
		"P_KEY=sk-never-shown-0123456789", "OPENAI_BASE_URL=http://env.example/v1")
	r := runBin(t, ws, env, "", "config", "--max-queue", "3")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
	}
	out := columns.ReplaceAllString(r.stdout, " ")
	for _, want := range []string{
		"workspace . default\n",
		"provider p " + projectSrc + "\n", // the only provider, last defined in the project file
		"model project-model " + projectSrc + "\n",
		"base_url http://env.example/v1 env OPENAI_BASE_URL\n",
		"api_key_env P_KEY (set) " + userSrc + "\n",
		"team.max_workers 2 " + projectSrc + "\n",
		"team.max_queue 3 flag\n",
		"team.max_turns 9 " + userSrc + "\n",
		"team.plan_timeout 15m0s default\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("config output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "sk-never-shown") {
		t.Fatal("config printed the key")
	}
	if entries, _ := os.ReadDir(filepath.Join(ws, ".agentteam")); len(entries) != 1 {
		t.Errorf("config wrote into the workspace: %v", entries)
	}

	r = runBin(t, ws, env, "", "config", "--json")
	var settings []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &settings); err != nil || r.code != 0 {
		t.Fatalf("config --json: exit %d, %v\n%s", r.code, err, r.stdout)
	}
	if s := settings[2]; s["name"] != "model" || s["value"] != "project-model" || s["source"] != projectSrc {
		t.Errorf("config --json's model: %v", s)
	}
}

// TestModelsThroughTheBinary: the list, and a refusal as exit 1 with one line.
func TestModelsThroughTheBinary(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good-key" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error"}}`)
			return
		}
		fmt.Fprint(w, `{"object":"list","data":[{"id":"b-model"},{"id":"a-model"}]}`)
	}))
	defer srv.Close()
	ws := t.TempDir()
	user := fmt.Sprintf("[providers.p]\nbase_url = %q\napi_key_env = \"P_KEY\"\n", srv.URL+"/v1")

	r := runBin(t, ws, configHome(t, user, "P_KEY=good-key"), "", "models")
	if r.code != 0 || r.stdout != "a-model\nb-model\n" {
		t.Fatalf("models: exit %d\nstdout %q\nstderr %s", r.code, r.stdout, r.stderr)
	}
	r = runBin(t, ws, configHome(t, user, "P_KEY=bad-key"), "", "models")
	want := "agentteam: the model server at " + srv.URL + "/v1 answered 401 Unauthorized: Incorrect API key provided. (the key is taken from P_KEY)\n"
	if r.code != exit.Failure || r.stderr != want || r.stdout != "" {
		t.Fatalf("models with a bad key: exit %d\nstderr %q\nwant   %q", r.code, r.stderr, want)
	}
}
