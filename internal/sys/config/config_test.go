package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/agentteam/agentteam/internal/testutil/testfs"
)

// setup writes the user file (under a fake HOME) and the project file (in a
// fresh workspace) when their text is not empty, and returns Load's options.
func setup(t *testing.T, user, project string, env map[string]string) Options {
	t.Helper()
	home, ws := t.TempDir(), t.TempDir()
	if env == nil {
		env = map[string]string{}
	}
	if _, ok := env["HOME"]; !ok {
		env["HOME"] = home
	}
	getenv := func(k string) string { return env[k] }
	testfs.WriteFile(t, UserPath(getenv), user)
	testfs.WriteFile(t, ProjectPath(ws), project)
	return Options{Workspace: ws, Getenv: getenv}
}

const (
	userSrc    Source = "user ~/.config/agentteam/config.toml"
	projectSrc Source = "project .agentteam/config.toml"
)

func TestLoadMergesTheFilesKeyByKey(t *testing.T) {
	user := `
provider = "openai"
[providers.openai]
base_url = "https://api.openai.com/v1"
api_key_env = "OPENAI_API_KEY"
model = "gpt-4.1-mini"
headers = { X-Title = "agentteam", X-Team = "user" }
price_input_per_million = 0.4

[providers.local]
base_url = "http://localhost:11434/v1"
api_key_env = "OLLAMA_KEY"
model = "qwen3"
stream = false

[roles]
reviewer = "openai/gpt-4.1"
writer = "meta-llama/Llama-3-70b"

[team]
max_workers = 8
shutdown_timeout = "90s"
`
	project := `
[providers.openai]
model = "gpt-4.1"
max_output_tokens = 4096
reasoning_effort = "high"
headers.X-Team = "project"

[roles.tester]
model = "local/qwen3-coder"
labels = ["gpu", "linux"]

[team]
max_workers = 2
auto_claim = true
plan_timeout = "2m"
isolation = "worktree"
`
	c, err := Load(setup(t, user, project, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !c.User.Found || !c.Project.Found || c.User.Source != userSrc || c.Project.Source != projectSrc {
		t.Fatalf("files: %+v %+v", c.User, c.Project)
	}
	if c.ProviderName != (Value[string]{"openai", userSrc}) {
		t.Errorf("provider %+v", c.ProviderName)
	}
	p := c.Provider()
	checks := []struct {
		name      string
		got, want any
	}{
		{"base_url from the user file", p.BaseURL, Value[string]{"https://api.openai.com/v1", userSrc}},
		{"model: the project wins", p.Model, Value[string]{"gpt-4.1", projectSrc}},
		{"api_key_env", p.APIKeyEnv, Value[string]{"OPENAI_API_KEY", userSrc}},
		{"stream unset", p.Stream, Value[bool]{}},
		{"max_output_tokens", p.MaxOutputTokens, Value[int]{4096, projectSrc}},
		{"reasoning_effort", p.ReasoningEffort, Value[string]{"high", projectSrc}},
		{"price in", p.PriceInputPerMillion, Value[float64]{0.4, userSrc}},
		{"headers merge per header", p.Headers, map[string]Value[string]{
			"X-Title": {"agentteam", userSrc}, "X-Team": {"project", projectSrc}}},
		{"the other provider", *c.Providers["local"], Provider{Name: "local", from: userSrc, Headers: map[string]Value[string]{}, Query: map[string]Value[string]{},
			BaseURL: Value[string]{"http://localhost:11434/v1", userSrc}, APIKeyEnv: Value[string]{"OLLAMA_KEY", userSrc},
			Model: Value[string]{"qwen3", userSrc}, Stream: Value[bool]{false, userSrc}}},
		{"roles: provider/model, a model id with a slash, per role", c.Roles, map[string]Value[Role]{
			"reviewer": {Role{Provider: "openai", Model: "gpt-4.1"}, userSrc},
			"writer":   {Role{Model: "meta-llama/Llama-3-70b"}, userSrc},
			"tester":   {Role{Provider: "local", Model: "qwen3-coder", Labels: []string{"gpu", "linux"}}, projectSrc}}},
		{"role names", c.RoleNames(), []string{"reviewer", "tester", "writer"}},
		{"team: the project wins", c.Team, Team{
			MaxWorkers:      Value[int]{2, projectSrc},
			ShutdownTimeout: Value[time.Duration]{90 * time.Second, userSrc},
			PlanTimeout:     Value[time.Duration]{2 * time.Minute, projectSrc},
			AutoClaim:       Value[bool]{true, projectSrc},
			Isolation:       Value[string]{"worktree", projectSrc}}},
	}
	for _, ch := range checks {
		if !reflect.DeepEqual(ch.got, ch.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", ch.name, ch.got, ch.want)
		}
	}
}

func TestLoadWhereTheFilesAre(t *testing.T) {
	xdg := t.TempDir()
	cases := []struct {
		name     string
		env      map[string]string
		user     string
		wantPath func(o Options) string
		wantSrc  func(o Options) Source
	}{
		{name: "no file at all",
			wantPath: func(o Options) string { return filepath.Join(o.Getenv("HOME"), ".config/agentteam/config.toml") },
			wantSrc:  func(Options) Source { return userSrc }},
		{name: "XDG_CONFIG_HOME wins over HOME",
			env:      map[string]string{"XDG_CONFIG_HOME": xdg},
			user:     "[team]\nmax_turns = 9\n",
			wantPath: func(Options) string { return filepath.Join(xdg, "agentteam/config.toml") },
			wantSrc:  func(Options) Source { return Source("user " + filepath.Join(xdg, "agentteam/config.toml")) }},
		{name: "a relative XDG_CONFIG_HOME is ignored",
			env:      map[string]string{"XDG_CONFIG_HOME": "rel/dir"},
			user:     "[team]\nmax_turns = 9\n",
			wantPath: func(o Options) string { return filepath.Join(o.Getenv("HOME"), ".config/agentteam/config.toml") },
			wantSrc:  func(Options) Source { return userSrc }},
		{name: "no HOME: no user file",
			env:      map[string]string{"HOME": ""},
			wantPath: func(Options) string { return "" },
			wantSrc:  func(Options) Source { return "user (no HOME)" }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := setup(t, tc.user, "", tc.env)
			c, err := Load(o)
			if err != nil {
				t.Fatal(err)
			}
			if c.User.Path != tc.wantPath(o) || c.User.Source != tc.wantSrc(o) {
				t.Errorf("user file %+v, want path %q source %q", c.User, tc.wantPath(o), tc.wantSrc(o))
			}
			if c.User.Found != (tc.user != "") || c.Project.Found || c.Found() != (tc.user != "") {
				t.Errorf("found: user %v project %v", c.User.Found, c.Project.Found)
			}
			if c.Project.Path != filepath.Join(o.Workspace, ".agentteam", "config.toml") {
				t.Errorf("project path %q", c.Project.Path)
			}
		})
	}
}

func TestLoadPicksTheDefaultProvider(t *testing.T) {
	cases := []struct {
		name, user, project string
		want                Value[string]
		err                 string
	}{
		{name: "no provider"},
		{name: "the only provider is the default, from the file that defines it",
			project: "[providers.local]\nmodel = \"m\"\n",
			want:    Value[string]{"local", projectSrc}},
		{name: "the project picks a provider of the user file",
			user:    "[providers.a]\nmodel = \"m\"\n[providers.b]\nmodel = \"n\"\n",
			project: "provider = \"b\"\n",
			want:    Value[string]{"b", projectSrc}},
		{name: "several and none picked",
			user: "[providers.a]\nmodel = \"m\"\n[providers.b]\nmodel = \"n\"\n",
			err:  "providers a, b are defined but none is the default: add provider = \"NAME\""},
		{name: "a provider that is not defined, with its line",
			project: "# comment\n\nprovider = \"nope\"\n[providers.a]\nmodel = \"m\"\n",
			err:     `.agentteam/config.toml, line 3: provider = "nope" names no [providers.nope] table (defined: a)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(setup(t, tc.user, tc.project, nil))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.ProviderName != tc.want {
				t.Errorf("provider %+v, want %+v", c.ProviderName, tc.want)
			}
			if (c.Provider() == nil) != (tc.want.V == "") {
				t.Errorf("Provider() = %+v", c.Provider())
			}
		})
	}
}

func TestUIPlainIsReadFromEitherFile(t *testing.T) {
	for _, c := range []struct {
		user, project string
		want          Value[bool]
	}{
		{"", "", Value[bool]{}},
		{"[ui]\nplain = true\n", "", Value[bool]{true, userSrc}},
		{"[ui]\nplain = true\n", "[ui]\nplain = false\n", Value[bool]{false, projectSrc}},
	} {
		cfg, err := Load(setup(t, c.user, c.project, nil))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.UI.Plain != c.want {
			t.Errorf("user %q project %q: ui.plain = %+v, want %+v", c.user, c.project, cfg.UI.Plain, c.want)
		}
	}
}

// TestBadFilesAreRefused: each bad file is one error naming the file, the
// line and the key, and never repeats a secret it holds.
func TestBadFilesAreRefused(t *testing.T) {
	const secret = "sk-proj-abcdefghijklmnop1234"
	cases := []struct {
		name    string
		text    string
		project bool
		says    []string
	}{
		{name: "unknown key in [team], with the keys it may have",
			text: "[team]\nmax_workers = 2\nmax_worker = 3\n",
			says: []string{"line 3", "team.max_worker is not a setting agentteam knows", "in [team]: auto_claim, git_remote, handoff_timeout, idle_timeout, isolation, max_cost, max_model_calls, max_queue, max_reply_bytes, max_tokens, max_tool_call_bytes, max_turns, max_workers"}},
		{name: "an idle timeout that is no duration",
			text: "[providers.x]\nidle_timeout = \"soon\"\n",
			says: []string{"line 2", "providers.x.idle_timeout must be a positive duration", `not "soon"`}},
		{name: "a negative idle timeout in [team]",
			text: "[team]\nidle_timeout = \"-5s\"\n",
			says: []string{"line 2", "team.idle_timeout must be a positive duration"}},
		{name: "an idle timeout as a number",
			text: "[team]\nidle_timeout = 90\n",
			says: []string{"line 2", "idle_timeout must be a duration in quotes"}},
		{name: "the key in a header no server reads it from",
			text: "[providers.x]\napi_key_header = \"X-Leak\"\n",
			says: []string{"line 2", "providers.x.api_key_header must be \"api-key\""}},
		{name: "a project file that says which header carries the key", project: true,
			text: "[providers.x]\napi_key_header = \"api-key\"\n",
			says: []string{"line 2", "providers.x.api_key_header is not read from a project file"}},
		{name: "a query that is not a table",
			text: "[providers.x]\nquery = \"api-version=1\"\n",
			says: []string{"line 2", "providers.x.query must be a table"}},
		{name: "a query value on two lines",
			text: "[providers.x]\nquery = {api-version = \"1\\n2\"}\n",
			says: []string{"providers.x.query.api-version must be a name and a one-line value"}},
		{name: "an isolation that is neither worktree nor none",
			text: "[team]\nisolation = \"docker\"\n",
			says: []string{"line 2", `team.isolation must be "worktree" or "none", not "docker"`}},
		{name: "a git remote git would take for an option",
			text: "[team]\ngit_remote = \"--upload-pack=x\"\n",
			says: []string{"line 2", `team.git_remote must name one of the clone's git remotes, like "origin", not "--upload-pack=x"`}},
		{name: "a top-level key written after a table header",
			text: "[team]\nmax_workers = 2\nprovider = \"x\"\n",
			says: []string{"line 3", "team.provider is not a setting agentteam knows (provider goes at the top of the file, before the first [table])"}},
		{name: "a team key in a provider table",
			text: "[providers.x]\nmodel = \"m\"\nmax_workers = 2\n",
			says: []string{"line 3", "providers.x.max_workers is not a setting agentteam knows (max_workers goes in [team])"}},
		{name: "unknown top-level key",
			text: "model = \"gpt-4.1\"\n",
			says: []string{"line 1", "model is not a setting", "at the top: context, hooks, mcp, permissions, provider, providers, roles, sandbox, team, ui"}},
		{name: "unknown provider key",
			text: "[providers.x]\nmodel = \"m\"\nbaseurl = \"http://h\"\n",
			says: []string{"line 3", "providers.x.baseurl is not a setting", "base_url"}},
		{name: "unknown table",
			text: "[teams]\nmax_workers = 2\n",
			says: []string{"line 1", "teams is not a setting"}},
		{name: "a project file that says where requests go", project: true,
			text: "[providers.evil]\nbase_url = \"https://collect.example/v1\"\n", says: []string{"line 2", "providers.evil.base_url is not read from a project file: a cloned repository could send your key to its own server", "provider = \"evil\""}},
		{name: "a project file that names the key to send", project: true,
			text: "[providers.openai]\napi_key_env = \"AWS_SECRET_ACCESS_KEY\"\n", says: []string{"line 2", "providers.openai.api_key_env is not read from a project file"}},
		{name: "a literal key in a project file",
			project: true,
			text:    "[providers.openai]\nmodel = \"m\"\napi_key = \"" + secret + "\"\n",
			says:    []string{"line 3", "providers.openai.api_key would put an API key in the project's files, which get committed", "api_key_env"}},
		{name: "a [ui] plain that is not true or false",
			text: "[ui]\nplain = \"yes\"\n", says: []string{"line 2", "ui.plain must be true or false"}},
		{name: "plain outside [ui]",
			text: "[team]\nplain = true\n", says: []string{"line 2", "(plain goes in [ui])"}},
		{name: "a bad sandbox mode",
			text: "[sandbox]\nmode = \"maybe\"\n", says: []string{"line 2", `sandbox.mode must be "auto", "required" or "off"`}},
		{name: "a bad sandbox network",
			text: "[sandbox]\nnetwork = true\n", says: []string{"line 2", "sandbox.network must be a string in quotes"}},
		{name: "a secret in the sandbox's env",
			text: "[sandbox]\nenv = [\"GOPATH\", \"GITHUB_TOKEN\"]\n", says: []string{"line 2", "names GITHUB_TOKEN, which looks like a secret"}},
		{name: "a relative writable dir",
			text: "[sandbox]\nwritable = [\"cache\"]\n", says: []string{"line 2", "sandbox.writable must list absolute directories"}},
		{name: "the root as a writable dir",
			text: "[sandbox]\nwritable = [\"/\"]\n", says: []string{"line 2", "must not list /"}},
		{name: "a relative hidden path",
			text: "[sandbox]\nread_hidden = [\".ssh\"]\n", says: []string{"line 2", "sandbox.read_hidden must list absolute paths"}},
		{name: "the root as a hidden path", project: true,
			text: "[sandbox]\nread_hidden = [\"/\"]\n", says: []string{"line 2", "sandbox.read_hidden must not list /"}},
		{name: "a project file that turns the sandbox off", project: true,
			text: "[sandbox]\nmode = \"off\"\n", says: []string{"line 2", "sandbox.mode is not read from a project file: a cloned repository could loosen the sandbox", `may only say "required"`}},
		{name: "a project file that says where the team's state goes", project: true,
			text: "[team]\nstore = \"nats://collect.example:4222\"\n", says: []string{"line 2", "team.store is not read from a project file: a cloned repository could send the team's messages to its own server"}},
		{name: "a literal key in the user file",
			text: "[providers.openai]\napi_key = \"" + secret + "\"\n",
			says: []string{"line 2", "providers.openai.api_key is not read", "api_key_env"}},
		{name: "a literal key at the top",
			project: true,
			text:    "api_key = \"" + secret + "\"\n",
			says:    []string{"line 1", "api_key would put an API key"}},
		{name: "a key without quotes is a syntax error that does not repeat it",
			text: "[providers.x]\napi_key = " + strings.TrimPrefix(secret, "sk-proj-") + "\n",
			says: []string{"line 2", "not valid TOML"}},
		{name: "the key in api_key_env",
			text: "[providers.x]\napi_key_env = \"" + secret + "\"\n",
			says: []string{"line 2", "providers.x.api_key_env must be the name of an environment variable", "not the key itself"}},
		{name: "a credential header",
			text: "[providers.x]\nheaders = { Authorization = \"Bearer " + secret + "\" }\n",
			says: []string{"line 2", "providers.x.headers.Authorization would put a credential in a config file"}},
		{name: "credentials in base_url",
			text: "[providers.x]\nbase_url = \"https://me:" + secret + "@example.com/v1\"\n",
			says: []string{"line 2", "base_url must not hold credentials"}},
		{name: "base_url not http",
			text: "[providers.x]\n\nbase_url = \"localhost:8080\"\n",
			says: []string{"line 3", "base_url must be an http:// or https:// URL"}},
		{name: "negative workers",
			text: "[team]\nmax_workers = -1\n",
			says: []string{"line 2", "team.max_workers must be at least 1, not -1"}},
		{name: "zero workers",
			text: "[team]\nmax_workers = 0\n",
			says: []string{"team.max_workers must be at least 1, not 0"}},
		{name: "negative queue",
			text: "[team]\nmax_queue = -5\n",
			says: []string{"team.max_queue must be at least 0, not -5"}},
		{name: "zero turns",
			text: "team.max_turns = 0\n",
			says: []string{"line 1", "team.max_turns must be at least 1"}},
		{name: "an unparsable duration",
			text: "[team]\nhandoff_timeout = \"soon\"\n",
			says: []string{"line 2", `team.handoff_timeout must be a positive duration such as "90s" or "5m", not "soon"`}},
		{name: "a zero duration",
			text: "[team]\nplan_timeout = \"0s\"\n",
			says: []string{"team.plan_timeout must be a positive duration"}},
		{name: "a duration without quotes",
			text: "[team]\nshutdown_timeout = 90\n",
			says: []string{"line 2", `team.shutdown_timeout must be a duration in quotes, like "90s"`}},
		{name: "a number in quotes",
			text: "[team]\nmax_workers = \"five\"\n",
			says: []string{"line 2", "team.max_workers must be a whole number"}},
		{name: "stream not a bool",
			text: "[providers.x]\nstream = \"no\"\n",
			says: []string{"line 2", "providers.x.stream must be true or false"}},
		{name: "providers not a table",
			text: "providers = \"openai\"\n",
			says: []string{"line 1", "providers must be a table"}},
		{name: "roles not a table",
			text: "roles = 3\n",
			says: []string{"line 1", "roles must be a table"}},
		{name: "headers not a table",
			text: "[providers.x]\nheaders = \"X-A: b\"\n",
			says: []string{"line 2", "providers.x.headers must be a table"}},
		{name: "a role with an empty model",
			text: "[roles]\nreviewer = \"openai/\"\n",
			says: []string{"line 2", `roles.reviewer must be "provider/model" or "model"`}},
		{name: "a role's table with a setting it does not have",
			text: "[roles.reviewer]\nmodel = \"x\"\nmodle = \"y\"\n",
			says: []string{"roles.reviewer", "modle is not a setting of a role (model, labels)"}},
		{name: "a role's label that is not a word",
			text: "[roles.reviewer]\nmodel = \"x\"\nlabels = [\"a b\"]\n",
			says: []string{"roles.reviewer", `label "a b" is not a word`}},
		{name: "a role that is a number",
			text: "[roles]\nreviewer = 3\n",
			says: []string{"line 2", "roles.reviewer", "must be a string in quotes"}},
		{name: "a negative price",
			text: "[providers.x]\nprice_output_per_million = -1.5\n",
			says: []string{"line 2", "providers.x.price_output_per_million must be a price of zero or more"}},
		{name: "an infinite price",
			text: "[providers.x]\nprice_input_per_million = inf\n",
			says: []string{"providers.x.price_input_per_million must be a price of zero or more"}},
		{name: "no output tokens",
			text: "[providers.x]\nmax_output_tokens = 0\n",
			says: []string{"providers.x.max_output_tokens must be at least 1"}},
		{name: "a provider name with a slash",
			text: "[providers.\"a/b\"]\nmodel = \"m\"\n",
			says: []string{"line 1", `providers."a/b" has a name agentteam cannot use`}},
		{name: "a model with spaces",
			text: "[providers.x]\nmodel = \"gpt 4\"\n",
			says: []string{"providers.x.model must be a model id without spaces"}},
		{name: "models with an empty id",
			text: "[providers.x]\nmodels = [\"a\", \"\"]\n",
			says: []string{"providers.x.models must list model ids without spaces"}},
		{name: "models not a list",
			text: "[providers.x]\nmodels = \"a\"\n",
			says: []string{"providers.x.models must be a list of model ids"}},
		{name: "a syntax error",
			text: "[team]\nmax_workers = 2\n[providers\n",
			says: []string{"line 4", "not valid TOML"}},
		{name: "a key set twice",
			text: "[team]\nmax_workers = 2\nmax_workers = 3\n",
			says: []string{"line 3", "not valid TOML"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			user, project := tc.text, ""
			if tc.project {
				user, project = "", tc.text
			}
			o := setup(t, user, project, nil)
			_, err := Load(o)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Load: %v, want an *Error", err)
			}
			msg := err.Error()
			path := UserPath(o.Getenv)
			if tc.project {
				path = ProjectPath(o.Workspace)
			}
			if !strings.HasPrefix(msg, "config file "+path) {
				t.Errorf("%q does not start by naming %s", msg, path)
			}
			for _, s := range tc.says {
				if !strings.Contains(msg, s) {
					t.Errorf("%q does not say %q", msg, s)
				}
			}
			if strings.Contains(msg, "abcdefghijklmnop") {
				t.Errorf("%q repeats the secret", msg)
			}
			if strings.Count(msg, "\n") > 0 {
				t.Errorf("%q is more than one line", msg)
			}
		})
	}
}

func TestAGoodFileLoads(t *testing.T) {
	// Every key, in every form TOML allows for it.
	text := `
provider = "x"
[providers.x]
base_url = "http://127.0.0.1:8080/v1"
api_key_env = "X_KEY"
model = "m"
models = ["m-mini", "m-large"]
stream = true
max_output_tokens = 100
reasoning_effort = "low"
price_input_per_million = 0
price_output_per_million = 2
idle_timeout = "3m"
[providers.x.headers]
HTTP-Referer = "https://example.com"
[providers.x.query]
api-version = "2024-10-21"
[roles]
"code reviewer" = "x/big"
[team]
max_workers = 1
max_queue = 0
max_turns = 3
shutdown_timeout = "1m30s"
plan_timeout = "10m"
handoff_timeout = "45s"
auto_claim = false
idle_timeout = "45s"
[sandbox]
mode = "required"
network = "off"
`
	for _, project := range []bool{false, true} {
		// What commands get besides the defaults comes from the user file (a
		// project file's waits for trust).
		widen := "env = [\"GOPATH\"]\nwritable = [\"~/.cache/go-build\", \"/var/cache/x\"]\n"
		user, proj := text+widen, ""
		if project {
			// Where requests go and which key they carry come only from the user file.
			where := "[providers.x]\nbase_url = \"http://127.0.0.1:8080/v1\"\napi_key_env = \"X_KEY\"\n"
			user, proj = where+"[sandbox]\n"+widen, strings.Replace(strings.Replace(text, "base_url = \"http://127.0.0.1:8080/v1\"\n", "", 1), "api_key_env = \"X_KEY\"\n", "", 1)
		}
		c, err := Load(setup(t, user, proj, nil))
		if err != nil {
			t.Fatalf("project %v: %v", project, err)
		}
		p := c.Provider()
		if p == nil || p.BaseURL.V != "http://127.0.0.1:8080/v1" || p.Headers["HTTP-Referer"].V != "https://example.com" ||
			!reflect.DeepEqual(c.Roles["code reviewer"].V, Role{Provider: "x", Model: "big"}) || c.Team.MaxQueue != (Value[int]{0, c.Team.MaxQueue.From}) ||
			!c.Team.MaxQueue.IsSet() || c.Team.ShutdownTimeout.V != 90*time.Second ||
			p.IdleTimeout.V != 3*time.Minute || c.Team.IdleTimeout.V != 45*time.Second || p.Query["api-version"].V != "2024-10-21" ||
			strings.Join(p.Models.V, ",") != "m-mini,m-large" {
			t.Errorf("project %v: loaded %+v, provider %+v", project, c, p)
		}
		if s := c.Sandbox; s.Mode.V != "required" || s.Network.V != "off" || !reflect.DeepEqual(s.Env.V, []string{"GOPATH"}) ||
			!reflect.DeepEqual(s.Writable.V, []string{"~/.cache/go-build", "/var/cache/x"}) {
			t.Errorf("project %v: [sandbox] loaded as %+v", project, s)
		}
	}
}

// A project file adds to the paths commands cannot read; the user file's
// stay.
func TestReadHiddenAddsUp(t *testing.T) {
	c, err := Load(setup(t, "[sandbox]\nread_hidden = [\"~/.vault\"]\n", "[sandbox]\nread_hidden = [\"/srv/keys\"]\n", nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Sandbox.ReadHidden.V; !reflect.DeepEqual(got, []string{"~/.vault", "/srv/keys"}) {
		t.Fatalf("read_hidden = %q", got)
	}
}

func TestUnreadableFile(t *testing.T) {
	o := setup(t, "", "", nil)
	// A directory where the file should be cannot be read.
	if err := os.MkdirAll(ProjectPath(o.Workspace), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Load(o)
	if err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("Load: %v", err)
	}
	// A workspace that is a file has no project file (the command says what is wrong with it).
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(Options{Workspace: f, Getenv: o.Getenv}); err != nil {
		t.Fatalf("Load in a file: %v", err)
	}
}

func TestLineOf(t *testing.T) {
	text := "a = 1\n[t]\nb = 2\n\"q k\" = 3\n[t.u]\nc = { d = 4 }\ne.f = 5\n"
	cases := []struct {
		key  toml.Key
		line int
	}{
		{toml.Key{"a"}, 1},
		{toml.Key{"t"}, 2},
		{toml.Key{"t", "b"}, 3},
		{toml.Key{"t", "q k"}, 4},
		{toml.Key{"t", "u"}, 5},
		{toml.Key{"t", "u", "c", "d"}, 6},
		{toml.Key{"t", "u", "e", "f"}, 7},
		{toml.Key{"nope"}, 0},
	}
	for _, tc := range cases {
		if got := lineOf(text, tc.key); got != tc.line {
			t.Errorf("lineOf(%v) = %d, want %d", tc.key, got, tc.line)
		}
	}
}

// Where the team's state lives is read from the user file.
func TestTheUserFileSaysTheStore(t *testing.T) {
	c, err := Load(setup(t, "[team]\nstore = \"nats://127.0.0.1:4222/web\"\n", "", nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Team.Store.V != "nats://127.0.0.1:4222/web" || !c.Team.Store.IsSet() {
		t.Fatalf("[team] store loaded as %+v", c.Team.Store)
	}
	// The commands that read nothing else read the user file alone: a
	// broken project file does not stop them.
	opts := setup(t, "[team]\nstore = \"nats://127.0.0.1:4222/web\"\n", "[team]\nmax_workers = -1\n", nil)
	if v, err := UserStore(opts.Getenv); err != nil || v.V != "nats://127.0.0.1:4222/web" {
		t.Fatalf("UserStore = %+v, %v", v, err)
	}
}

// [context] files add up, the user file's first, and count from an
// untrusted project file; where both set max_bytes the smaller holds.
func TestContextFilesAddUpAndCountUntrusted(t *testing.T) {
	c, err := Load(setup(t, "[context]\nfiles = [\"CLAUDE.md\"]\nmax_bytes = 4096\n", "[context]\nfiles = [\"CRUSH.md\"]\nmax_bytes = 65536\n", nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.Project.Trusted || !reflect.DeepEqual(c.Context.Files.V, []string{"CLAUDE.md", "CRUSH.md"}) || c.Context.MaxBytes.V != 4096 || c.Context.MaxBytes.From != userSrc {
		t.Fatalf("[context] loaded as %+v (trusted %v)", c.Context, c.Project.Trusted)
	}
	if !c.Held.IsEmpty() {
		t.Fatalf("held %v", c.Held.Lines(true))
	}
}

// A name that is not a markdown file of the directory is refused in one
// sentence: nothing hidden, nothing elsewhere.
func TestContextFilesMustBeMarkdownNames(t *testing.T) {
	for _, tc := range []struct{ text, says string }{
		{"[context]\nfiles = [\"../../.ssh/id_rsa\"]\n", `context.files must list file names: "../../.ssh/id_rsa" is not a file name`},
		{"[context]\nfiles = [\".env.md\"]\n", `".env.md" is a hidden file`},
		{"[context]\nfiles = [\"secrets.txt\"]\n", `"secrets.txt" is not a markdown file's name`},
		{"[context]\nmax_bytes = 10\n", "context.max_bytes must be between 1024 and 1048576, not 10"},
		{"[context]\nfile = [\"CLAUDE.md\"]\n", "in [context]: files, max_bytes"},
	} {
		_, err := Load(setup(t, "", tc.text, nil))
		if err == nil || !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: got %v, want one line saying %q", tc.text, err, tc.says)
		}
	}
}

func TestCheckContextFile(t *testing.T) {
	for _, ok := range []string{"CLAUDE.md", "CRUSH.md", "GEMINI.md", "notes.MD"} {
		if err := CheckContextFile(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "../x.md", "docs/A.md", ".env", ".secret.md", "id_rsa", "a\x00.md", "..", "C:\\x.md"} {
		if err := CheckContextFile(bad); err == nil {
			t.Errorf("%q allowed", bad)
		}
	}
}
