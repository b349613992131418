package config

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/BurntSushi/toml"
)

// Error is a config file that cannot be used: one sentence naming the file,
// the line when known, and the key.
type Error struct {
	Path string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	where := "config file " + e.Path
	if e.Line > 0 {
		where += fmt.Sprintf(", line %d", e.Line)
	}
	return where + ": " + e.Msg
}

// rawRole is one [roles] entry as written: "provider/model", or a table
// [roles.NAME] with model and labels (what a worker must offer to run the
// role's teammates on a team across hosts).
type rawRole struct {
	Model  string
	Labels []string
}

// UnmarshalTOML takes a string or a table of model and labels; anything
// else is an error the decoder reports at the role's key.
func (r *rawRole) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case string:
		r.Model = x
		return nil
	case map[string]any:
		for k, val := range x {
			switch k {
			case "model":
				m, ok := val.(string)
				if !ok {
					return errors.New("model must be a string in quotes")
				}
				r.Model = m
			case "labels":
				list, ok := val.([]any)
				if !ok {
					return errors.New(`labels must be a list of words in quotes, like ["gpu"]`)
				}
				for _, l := range list {
					s, ok := l.(string)
					if !ok || !labelRE().MatchString(s) {
						return fmt.Errorf("label %q is not a word of 1 to 32 letters, digits, '-', '_' or '.'", fmt.Sprint(l))
					}
					r.Labels = append(r.Labels, s)
				}
			default:
				return fmt.Errorf("%s is not a setting of a role (model, labels)", k)
			}
		}
		return nil
	}
	return errors.New(`must be a string in quotes, like "openai/gpt-4.1", or a table of model and labels`)
}

// labelRE is a placement label: a short word (tools.CheckLabel's rule).
var labelRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.-]{1,32}$`) })

// rawFile is one config file as written.
type rawFile struct {
	Provider  *string                `toml:"provider"`
	Providers map[string]rawProvider `toml:"providers"`
	Roles     map[string]rawRole     `toml:"roles"`
	Team      rawTeam                `toml:"team"`
	// Permissions is [permissions] (permissions.go).
	Permissions rawPermissions `toml:"permissions"`
	Sandbox     rawSandbox     `toml:"sandbox"`
	UI          rawUI          `toml:"ui"`
	Context     rawContext     `toml:"context"`
	MCP         rawMCP         `toml:"mcp"`
	// Hooks are [[hooks.EVENT]] tables, by event (hooks.go).
	Hooks map[string][]rawHook `toml:"hooks"`

	path         string
	providerLine int
	sha256       string // of the file's bytes, which trust is bound to
}

type rawProvider struct {
	BaseURL   *string `toml:"base_url"`
	APIKeyEnv *string `toml:"api_key_env"`
	// APIKey is read only to be refused with a sentence of its own.
	APIKey                any               `toml:"api_key"`
	Model                 *string           `toml:"model"`
	Models                *[]string         `toml:"models"`
	Stream                *bool             `toml:"stream"`
	Headers               map[string]string `toml:"headers"`
	MaxOutputTokens       *int              `toml:"max_output_tokens"`
	ReasoningEffort       *string           `toml:"reasoning_effort"`
	APIKeyHeader          *string           `toml:"api_key_header"`
	Query                 map[string]string `toml:"query"`
	IdleTimeout           *string           `toml:"idle_timeout"`
	PriceInputPerMillion  *float64          `toml:"price_input_per_million"`
	PriceOutputPerMillion *float64          `toml:"price_output_per_million"`
	ContextWindow         *int              `toml:"context_window"`
}

type rawTeam struct {
	MaxWorkers      *int    `toml:"max_workers"`
	MaxQueue        *int    `toml:"max_queue"`
	MaxTurns        *int    `toml:"max_turns"`
	ShutdownTimeout *string `toml:"shutdown_timeout"`
	PlanTimeout     *string `toml:"plan_timeout"`
	HandoffTimeout  *string `toml:"handoff_timeout"`
	AutoClaim       *bool   `toml:"auto_claim"`
	IdleTimeout     *string `toml:"idle_timeout"`
	Isolation       *string `toml:"isolation"`
	GitRemote       *string `toml:"git_remote"`
	Store           *string `toml:"store"`
	// The budget of a run or chat; a project file's only tightens (merge).
	MaxModelCalls *int     `toml:"max_model_calls"`
	MaxTokens     *int     `toml:"max_tokens"`
	MaxCost       *float64 `toml:"max_cost"`
	// Bounds on one model reply, in bytes; a project file's only tightens.
	MaxToolCallBytes *int `toml:"max_tool_call_bytes"`
	MaxReplyBytes    *int `toml:"max_reply_bytes"`
}

type rawSandbox struct {
	Mode     *string  `toml:"mode"`
	Network  *string  `toml:"network"`
	Env      []string `toml:"env"`
	Writable []string `toml:"writable"`
	// ReadHidden adds to the credentials commands cannot read.
	ReadHidden []string `toml:"read_hidden"`
}

type rawUI struct {
	Plain *bool `toml:"plain"`
}

// rawContext is [context]: the files agents are given as instructions.
type rawContext struct {
	// Files are names looked for after AGENTS.md in each directory.
	Files    []string `toml:"files"`
	MaxBytes *int     `toml:"max_bytes"`
}

// readFile reads and checks one file; a missing file is found == false.
func readFile(path string, project bool) (f *rawFile, found bool, err error) {
	if path == "" {
		return nil, false, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, false, nil
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, false, &Error{Path: path, Msg: fmt.Sprintf("cannot be read: %v", err)}
	}
	f, err = parse(path, string(data), project)
	if err != nil {
		return nil, false, err
	}
	f.sha256 = sum(data)
	return f, true, nil
}

// parse decodes and checks one file's text.
func parse(path, data string, project bool) (*rawFile, error) {
	f := &rawFile{path: path}
	md, err := toml.Decode(data, f)
	if err != nil {
		return nil, decodeError(path, err)
	}
	fail := func(key toml.Key, format string, a ...any) error {
		return &Error{Path: path, Line: lineOf(data, key), Msg: key.String() + " " + fmt.Sprintf(format, a...)}
	}
	if f.Provider != nil {
		f.providerLine = lineOf(data, toml.Key{"provider"})
	}

	// A key in the file is refused before anything else is said about it.
	keys := md.Keys()
	for _, k := range keys {
		if last := k[len(k)-1]; strings.EqualFold(last, "api_key") || strings.EqualFold(last, "apikey") {
			return nil, refuseAPIKey(fail, k, project)
		}
	}
	for _, name := range sortedKeys(f.Providers) {
		if f.Providers[name].APIKey != nil {
			return nil, refuseAPIKey(fail, keyAs(keys, toml.Key{"providers", name, "api_key"}), project)
		}
	}
	// A project file comes with a repository someone else may have written:
	// it may pick a provider, a model and team settings, never where
	// requests go nor which key they carry, or a cloned repository could
	// send the person's key to its own server. What the decoder filled is
	// checked, whatever the key's spelling.
	if project {
		for _, name := range sortedKeys(f.Providers) {
			p := f.Providers[name]
			for _, c := range []struct {
				key string
				set bool
			}{{"base_url", p.BaseURL != nil}, {"api_key_env", p.APIKeyEnv != nil}, {"api_key_header", p.APIKeyHeader != nil}} {
				if c.set {
					return nil, fail(keyAs(keys, toml.Key{"providers", name, c.key}), "is not read from a project file: a cloned repository could send your key to its own server; "+
						"define the provider in your user file (%s) and pick it here with provider = \"%s\"", userPathHint, name)
				}
			}
		}
	}
	// Nor where the team's messages go: a store named by a cloned
	// repository would hand every message and task to its server.
	if project && f.Team.Store != nil {
		return nil, fail(keyAs(keys, toml.Key{"team", "store"}), "is not read from a project file: a cloned repository could send the team's messages to its own server; "+
			"set it in your user file (%s), with --store or AGENTTEAM_STORE", userPathHint)
	}
	if project {
		if err := f.Sandbox.checkProject(fail); err != nil {
			return nil, err
		}
	}
	// The toml package leaves a map alone when the file gives it a non-table.
	// (A table made implicitly, by [a.b] or a.b = 1, has no type.)
	for _, k := range tableKeys(f) {
		if typ := md.Type(k...); typ != "" && typ != "Hash" {
			return nil, fail(k, "must be a table")
		}
	}
	if k, want, ok := miscased(keys); ok {
		return nil, fail(k, "is not a setting agentteam knows: keys are case-sensitive, and this one is written %s", want)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return nil, fail(u[0], "is not a setting agentteam knows%s", misplacedHint(u[0], knownHint(u[0])))
	}
	if err := f.check(fail); err != nil {
		return nil, err
	}
	if err := f.Permissions.check(fail); err != nil {
		return nil, err
	}
	return f, nil
}

// refuseAPIKey says why a key in a file is never read.
func refuseAPIKey(fail func(toml.Key, string, ...any) error, k toml.Key, project bool) error {
	if project {
		return fail(k, "would put an API key in the project's files, which get committed: keep the key in an environment variable and name that variable with api_key_env = \"NAME\"")
	}
	return fail(k, "is not read: keep the key in an environment variable and name that variable with api_key_env = \"NAME\"")
}

// tableKeys are the keys that must be tables if present.
func tableKeys(f *rawFile) []toml.Key {
	keys := []toml.Key{{"providers"}, {"roles"}, {"team"}, {"permissions"}, {"sandbox"}, {"ui"}, {"context"}, {"hooks"}}
	for _, name := range sortedKeys(f.Providers) {
		keys = append(keys, toml.Key{"providers", name}, toml.Key{"providers", name, "headers"}, toml.Key{"providers", name, "query"})
	}
	return keys
}

// userPathHint names the user file in sentences.
const userPathHint = "~/.config/agentteam/config.toml"

var (
	nameRE   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) })
	envRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })
	headerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$") })
	effortRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]+$`) })
	// Headers that carry credentials: a file holding one holds a secret.
	secretHeaders = map[string]bool{"authorization": true, "proxy-authorization": true, "api-key": true, "x-api-key": true, "cookie": true}
	// Headers that may carry the key instead of Authorization.
	keyHeaders = map[string]bool{"api-key": true, "x-api-key": true}
)

// check refuses values no run can use.
func (f *rawFile) check(fail func(toml.Key, string, ...any) error) error {
	if f.Provider != nil && !nameRE().MatchString(*f.Provider) {
		return fail(toml.Key{"provider"}, "must name a provider (letters, digits, _ . -)")
	}
	for _, name := range sortedKeys(f.Providers) {
		p := f.Providers[name]
		key := func(k ...string) toml.Key { return append(toml.Key{"providers", name}, k...) }
		if !nameRE().MatchString(name) {
			return fail(key(), "has a name agentteam cannot use: a provider's name is letters, digits, _ . - (at most 64, no slash)")
		}
		if p.BaseURL != nil {
			u, err := url.Parse(*p.BaseURL)
			switch {
			case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
				return fail(key("base_url"), "must be an http:// or https:// URL, like \"https://api.openai.com/v1\"")
			case u.User != nil:
				return fail(key("base_url"), "must not hold credentials: keep the key in an environment variable named by api_key_env")
			}
		}
		if p.APIKeyEnv != nil && !envRE().MatchString(*p.APIKeyEnv) {
			// Never echo it: it may be the key itself.
			return fail(key("api_key_env"), "must be the name of an environment variable (like \"OPENAI_API_KEY\"), not the key itself")
		}
		if p.Model != nil && (*p.Model == "" || strings.ContainsAny(*p.Model, " \t\r\n")) {
			return fail(key("model"), "must be a model id without spaces")
		}
		if p.Models != nil {
			for _, m := range *p.Models {
				if m == "" || strings.ContainsAny(m, " \t\r\n") {
					return fail(key("models"), "must list model ids without spaces, like [\"gpt-4.1\", \"gpt-4.1-mini\"]")
				}
			}
		}
		for _, h := range sortedKeys(p.Headers) {
			switch {
			case !headerRE().MatchString(h):
				return fail(key("headers", h), "is not a valid HTTP header name")
			case secretHeaders[strings.ToLower(h)]:
				return fail(key("headers", h), "would put a credential in a config file: keep the key in an environment variable named by api_key_env")
			case strings.ContainsAny(p.Headers[h], "\r\n"):
				return fail(key("headers", h), "must be one line")
			}
		}
		if h := p.APIKeyHeader; h != nil && (!headerRE().MatchString(*h) || !keyHeaders[strings.ToLower(*h)]) {
			return fail(key("api_key_header"), "must be \"api-key\" (Azure) or \"x-api-key\": unset, the key goes in Authorization: Bearer")
		}
		for _, q := range sortedKeys(p.Query) {
			if q == "" || strings.ContainsAny(q+p.Query[q], "\r\n") {
				return fail(key("query", q), "must be a name and a one-line value, like api-version = \"2024-10-21\"")
			}
		}
		if err := checkDuration(fail, key("idle_timeout"), p.IdleTimeout); err != nil {
			return err
		}
		if p.MaxOutputTokens != nil && *p.MaxOutputTokens < 1 {
			return fail(key("max_output_tokens"), "must be at least 1")
		}
		if p.ReasoningEffort != nil && !effortRE().MatchString(*p.ReasoningEffort) {
			return fail(key("reasoning_effort"), "must be a word such as \"low\", \"medium\" or \"high\"")
		}
		for _, c := range []struct {
			key string
			v   *float64
		}{{"price_input_per_million", p.PriceInputPerMillion}, {"price_output_per_million", p.PriceOutputPerMillion}} {
			if c.v != nil && (*c.v < 0 || math.IsNaN(*c.v) || math.IsInf(*c.v, 0)) {
				return fail(key(c.key), "must be a price of zero or more")
			}
		}
	}
	for _, role := range sortedKeys(f.Roles) {
		m := f.Roles[role].Model
		if m == "" || strings.ContainsAny(m, " \t\r\n") || strings.HasPrefix(m, "/") || strings.HasSuffix(m, "/") {
			return fail(toml.Key{"roles", role}, "must be \"provider/model\" or \"model\", like \"openai/gpt-4.1\"")
		}
	}
	t := f.Team
	for _, c := range []struct {
		key string
		v   *int
		min int
	}{{"max_workers", t.MaxWorkers, 1}, {"max_queue", t.MaxQueue, 0}, {"max_turns", t.MaxTurns, 1},
		{"max_model_calls", t.MaxModelCalls, 0}, {"max_tokens", t.MaxTokens, 0},
		{"max_tool_call_bytes", t.MaxToolCallBytes, 1024}, {"max_reply_bytes", t.MaxReplyBytes, 1024}} {
		if c.v != nil && *c.v < c.min {
			return fail(toml.Key{"team", c.key}, "must be at least %d, not %d", c.min, *c.v)
		}
	}
	if t.MaxCost != nil && *t.MaxCost < 0 {
		return fail(toml.Key{"team", "max_cost"}, "must not be negative, not %v", *t.MaxCost)
	}
	if t.Isolation != nil && *t.Isolation != "worktree" && *t.Isolation != "none" {
		return fail(toml.Key{"team", "isolation"}, "must be \"worktree\" or \"none\", not %q", *t.Isolation)
	}
	if t.GitRemote != nil && !ValidGitRemote(*t.GitRemote) {
		return fail(toml.Key{"team", "git_remote"}, "must name one of the clone's git remotes, like \"origin\", not %q", *t.GitRemote)
	}
	for _, c := range []struct {
		key string
		v   *string
	}{{"shutdown_timeout", t.ShutdownTimeout}, {"plan_timeout", t.PlanTimeout}, {"handoff_timeout", t.HandoffTimeout}, {"idle_timeout", t.IdleTimeout}} {
		if err := checkDuration(fail, toml.Key{"team", c.key}, c.v); err != nil {
			return err
		}
	}
	if err := f.checkMCP(fail); err != nil {
		return err
	}
	if err := f.Context.check(fail); err != nil {
		return err
	}
	if err := f.checkHooks(fail); err != nil {
		return err
	}
	return f.Sandbox.check(fail)
}

// check refuses [sandbox] values no run can use.
func (s rawSandbox) check(fail func(toml.Key, string, ...any) error) error {
	key := func(k string) toml.Key { return toml.Key{"sandbox", k} }
	if s.Mode != nil && *s.Mode != "auto" && *s.Mode != "required" && *s.Mode != "off" {
		return fail(key("mode"), "must be \"auto\", \"required\" or \"off\", not %q", *s.Mode)
	}
	if s.Network != nil && *s.Network != "on" && *s.Network != "off" {
		return fail(key("network"), "must be \"on\" or \"off\", not %q", *s.Network)
	}
	for _, name := range s.Env {
		switch {
		case !envRE().MatchString(name):
			return fail(key("env"), "must list names of environment variables, and %q is not one", name)
		case secretName(name):
			return fail(key("env"), "names %s, which looks like a secret (*_TOKEN, *_SECRET, *_KEY, *PASSWORD*): commands never get those", name)
		}
	}
	for _, dir := range s.Writable {
		if !filepath.IsAbs(dir) && !strings.HasPrefix(dir, "~/") {
			return fail(key("writable"), "must list absolute directories (or ~/...), and %q is not one", dir)
		}
		if filepath.Clean(dir) == "/" {
			return fail(key("writable"), "must not list /: that would let commands write everywhere")
		}
	}
	for _, path := range s.ReadHidden {
		if !filepath.IsAbs(path) && !strings.HasPrefix(path, "~/") {
			return fail(key("read_hidden"), "must list absolute paths (or ~/...), and %q is not one", path)
		}
		if c := filepath.Clean(path); c == "/" || c == "~" {
			return fail(key("read_hidden"), "must not list %s: commands could read nothing and run nothing", path)
		}
	}
	return nil
}

// check refuses [context] values no run can use.
func (c rawContext) check(fail func(toml.Key, string, ...any) error) error {
	for _, n := range c.Files {
		if err := CheckContextFile(n); err != nil {
			return fail(toml.Key{"context", "files"}, "must list file names: %v", err)
		}
	}
	if c.MaxBytes != nil && (*c.MaxBytes < 1024 || *c.MaxBytes > MaxContextBytes) {
		return fail(toml.Key{"context", "max_bytes"}, "must be between 1024 and %d, not %d", MaxContextBytes, *c.MaxBytes)
	}
	return nil
}

// MaxContextBytes is the most [context] max_bytes may be.
const MaxContextBytes = 1 << 20

// CheckContextFile refuses a [context] files name that is not a plain
// markdown file's: no directory, not hidden, ending in .md. A name from an
// untrusted project file can so point the agents at nothing but the
// project's own notes, never at .env, a key or a file elsewhere.
func CheckContextFile(n string) error {
	switch {
	case n == "" || strings.ContainsAny(n, "/\\\x00") || n == "." || n == "..":
		return fmt.Errorf("%q is not a file name: name a file in each directory, like \"CLAUDE.md\"", n)
	case strings.HasPrefix(n, "."):
		return fmt.Errorf("%q is a hidden file: only a project's visible notes are read, like \"CLAUDE.md\"", n)
	case !strings.EqualFold(filepath.Ext(n), ".md") || len(n) > 255:
		return fmt.Errorf("%q is not a markdown file's name (NAME.md, like \"CLAUDE.md\")", n)
	}
	return nil
}

// checkDuration refuses a duration that does not parse or is not positive.
func checkDuration(fail func(toml.Key, string, ...any) error, key toml.Key, v *string) error {
	if v == nil {
		return nil
	}
	if d, err := time.ParseDuration(*v); err != nil || d <= 0 {
		return fail(key, "must be a positive duration such as \"90s\" or \"5m\", not %q", *v)
	}
	return nil
}

// checkProject refuses what a project file may not say about the sandbox:
// a cloned repository may make it stricter, never turn it off. (What
// widens it, env, writable and network = "on", waits for trust: held.go.)
func (s rawSandbox) checkProject(fail func(toml.Key, string, ...any) error) error {
	if s.Mode != nil && *s.Mode != "required" {
		return fail(toml.Key{"sandbox", "mode"}, "is not read from a project file: a cloned repository could loosen the sandbox; set it in your user file (%s) (a project file may only say \"required\")", userPathHint)
	}
	return nil
}

// secretName reports whether a variable's name says it holds a secret, as
// the sandbox judges it.
func secretName(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasSuffix(n, "_TOKEN") || strings.HasSuffix(n, "_SECRET") || strings.HasSuffix(n, "_KEY") ||
		strings.Contains(n, "PASSWORD")
}

// knownHint lists the keys the table holding key may have.
func knownHint(key toml.Key) string {
	var t reflect.Type
	switch {
	case len(key) == 1:
		t = reflect.TypeOf(rawFile{})
	case len(key) == 2 && key[0] == "team":
		t = reflect.TypeOf(rawTeam{})
	case len(key) == 2 && key[0] == "permissions":
		t = reflect.TypeOf(rawPermissions{})
	case len(key) == 2 && key[0] == "sandbox":
		t = reflect.TypeOf(rawSandbox{})
	case len(key) == 2 && key[0] == "ui":
		t = reflect.TypeOf(rawUI{})
	case len(key) == 2 && key[0] == "context":
		t = reflect.TypeOf(rawContext{})
	case len(key) == 3 && key[0] == "providers":
		t = reflect.TypeOf(rawProvider{})
	case len(key) == 3 && key[0] == "hooks":
		t = reflect.TypeOf(rawHook{})
	default:
		return ""
	}
	var names []string
	for i := range t.NumField() {
		if n := t.Field(i).Tag.Get("toml"); n != "" && n != "api_key" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	where := "at the top"
	if len(key) > 1 {
		where = "in [" + key[:len(key)-1].String() + "]"
	}
	return fmt.Sprintf(" (%s: %s)", where, strings.Join(names, ", "))
}

// misplacedHint says where a key that belongs to another table goes: a
// key written after a [table] header is in that table.
func misplacedHint(key toml.Key, hint string) string {
	if len(key) < 2 {
		return hint
	}
	last := key[len(key)-1]
	for _, t := range []struct {
		typ   reflect.Type
		where string
	}{
		{reflect.TypeOf(rawFile{}), "at the top of the file, before the first [table]"},
		{reflect.TypeOf(rawTeam{}), "in [team]"},
		{reflect.TypeOf(rawPermissions{}), "in [permissions]"},
		{reflect.TypeOf(rawSandbox{}), "in [sandbox]"},
		{reflect.TypeOf(rawUI{}), "in [ui]"},
		{reflect.TypeOf(rawContext{}), "in [context]"},
		{reflect.TypeOf(rawProvider{}), "in a [providers.NAME] table"},
	} {
		for i := range t.typ.NumField() {
			if t.typ.Field(i).Tag.Get("toml") == last {
				return fmt.Sprintf(" (%s goes %s)", last, t.where)
			}
		}
	}
	return hint
}

var lastKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^toml: line (\d+) \(last key "(.*)"\): (.*)$`) })

// decodeError turns the toml package's error into one sentence. Syntax
// messages quote the text they stumbled on, which may be a key written
// without quotes: long quoted text is left out.
func decodeError(path string, err error) error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		where := ""
		if pe.LastKey != "" {
			where = " at " + pe.LastKey
		}
		return &Error{Path: path, Line: pe.Position.Line, Msg: "not valid TOML" + where + ": " + redactQuoted(pe.Message)}
	}
	if m := lastKeyRE().FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		if want := expected(m[2]); want != "" {
			return &Error{Path: path, Line: line, Msg: m[2] + " must be " + want}
		}
		return &Error{Path: path, Line: line, Msg: m[2] + ": " + m[3]}
	}
	return &Error{Path: path, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
}

var quotedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"[^"]{9,}"`) })

func redactQuoted(s string) string { return quotedRE().ReplaceAllString(s, `"…"`) }

// expected says what kind of value the key at path holds.
func expected(path string) string {
	i := strings.LastIndexByte(path, '.')
	switch last := path[i+1:]; last {
	case "max_workers", "max_queue", "max_turns", "max_output_tokens", "max_model_calls", "max_tokens", "context_window", "max_tool_call_bytes", "max_reply_bytes", "max_bytes":
		return "a whole number"
	case "shutdown_timeout", "plan_timeout", "handoff_timeout", "idle_timeout":
		return "a duration in quotes, like \"90s\""
	case "stream", "auto_claim", "plain":
		return "true or false"
	case "price_input_per_million", "price_output_per_million", "max_cost":
		return "a number"
	case "provider", "base_url", "api_key_env", "api_key_header", "model", "reasoning_effort", "isolation", "git_remote", "network", "store":
		return "a string in quotes"
	case "models":
		return "a list of model ids in quotes, like [\"gpt-4.1\"]"
	case "mode", "timeout", "matcher", "command":
		return "a string in quotes"
	case "allow", "ask", "deny":
		return "a list of rules in quotes, like [\"bash(go test *)\"]"
	case "files":
		return "a list of file names in quotes, like [\"CLAUDE.md\"]"
	case "providers", "roles", "team", "headers", "permissions", "query", "sandbox", "ui", "context":
		return "a table"
	case "env", "writable", "read_hidden":
		return "a list of strings in quotes, like [\"GOPATH\"]"
	}
	if strings.Count(path, ".") == 1 && strings.HasPrefix(path, "hooks.") {
		return "a list of tables: write each hook as [[hooks.EVENT]] (two brackets) with command = \"...\""
	}
	if strings.HasPrefix(path, "roles.") {
		return "a string in quotes, like \"openai/gpt-4.1\", or a table of model = \"…\" and labels = [\"gpu\"] (words of letters, digits, '-', '_', '.')"
	}
	if strings.Count(path, ".") == 1 && strings.HasPrefix(path, "providers.") {
		return "a table"
	}
	return ""
}

// lineOf finds the line where key is set. The toml package keeps key
// positions to itself but puts them in decode errors, so this decodes the
// text again into a type that fails at key and nowhere else.
func lineOf(data string, key toml.Key) int {
	t := reflect.TypeOf(failHere{})
	for i := len(key) - 1; i >= 0; i-- {
		t = reflect.StructOf([]reflect.StructField{{
			Name: "F", Type: t, Tag: reflect.StructTag("toml:" + strconv.Quote(key[i])),
		}})
	}
	_, err := toml.Decode(data, reflect.New(t).Interface())
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.Position.Line
	}
	return 0
}

type failHere struct{}

func (failHere) UnmarshalTOML(any) error { return errors.New("here") }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ValidGitRemote reports whether name may name a git remote ("" for none):
// nothing git could take for an option or a URL reaches its command line.
func ValidGitRemote(name string) bool {
	return name == "" || name[0] != '-' && !strings.ContainsAny(name, " \t\n\x00:")
}
