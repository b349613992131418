// Package config reads agentteam's TOML config files: the user's
// ($XDG_CONFIG_HOME/agentteam/config.toml, else ~/.config/agentteam/config.toml)
// and the project's (WORKSPACE/.agentteam/config.toml, which wins). It knows
// nothing of flags or of the environment variables that override the files:
// the commands layer those on top.
package config

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/agentteam/agentteam/internal/plug/hooks"
)

// Source says where a setting came from, as `agentteam config` prints it.
type Source string

// The sources that are not files.
const (
	Default Source = "default"
	Flag    Source = "flag"
)

// Env is the source of a setting taken from the environment variable name.
func Env(name string) Source { return Source("env " + name) }

// Value is a setting from the files and the file it came from; the zero
// Value was set in none.
type Value[T any] struct {
	V    T
	From Source
}

// IsSet reports whether a file set the value.
func (v Value[T]) IsSet() bool { return v.From != "" }

// Provider is one [providers.NAME] table, merged over both files.
type Provider struct {
	Name string
	// BaseURL is the OpenAI-compatible API's base, usually ending in /v1.
	BaseURL Value[string]
	// APIKeyEnv names the environment variable that holds the key; the key
	// itself is never in a file.
	APIKeyEnv Value[string]
	Model     Value[string]
	// Models are more models of the provider an agent may be given.
	Models          Value[[]string]
	Stream          Value[bool]
	Headers         map[string]Value[string]
	MaxOutputTokens Value[int]
	ReasoningEffort Value[string]
	// APIKeyHeader names the header that carries the key as it is (Azure's
	// "api-key"); unset, the key goes in Authorization: Bearer.
	APIKeyHeader Value[string]
	// Query is added to every request's URL (Azure's api-version).
	Query map[string]Value[string]
	// IdleTimeout bounds the wait for the next byte of a reply; it wins
	// over [team]'s.
	IdleTimeout Value[time.Duration]
	// Prices in currency units per million tokens.
	PriceInputPerMillion, PriceOutputPerMillion Value[float64]
	// ContextWindow is the model's context window in tokens (0: learned
	// from the server's first refusal).
	ContextWindow Value[int]

	from Source // the last file with a [providers.NAME] table
}

// Role is the model a [roles] entry gives a role, and the labels a worker
// must have to run its teammates (a team across hosts).
type Role struct {
	// Provider is "" for the default provider.
	Provider, Model string
	Labels          []string
}

// String is the role as written: "provider/model" or "model".
func (r Role) String() string {
	if r.Provider == "" {
		return r.Model
	}
	return r.Provider + "/" + r.Model
}

// Team holds the [team] defaults for the team flags.
type Team struct {
	MaxWorkers, MaxQueue, MaxTurns               Value[int]
	ShutdownTimeout, PlanTimeout, HandoffTimeout Value[time.Duration]
	AutoClaim                                    Value[bool]
	// IdleTimeout is every provider's, unless the provider sets its own.
	IdleTimeout Value[time.Duration]
	Isolation   Value[string]
	// GitRemote is the git remote the team's work travels through (the
	// default of --git-remote); "" is none.
	GitRemote Value[string]
	// Store is where the team's state lives: "" or "file" for the
	// workspace's files, nats://HOST:PORT[/TEAM] for JetStream. Only the
	// user file may set it.
	Store Value[string]
	// The budget of a run or chat (0: none). Where both files set one, the
	// smaller holds: a project file never raises the person's.
	MaxModelCalls, MaxTokens Value[int]
	MaxCost                  Value[float64]
	// MaxToolCallBytes and MaxReplyBytes bound one model reply's tool-call
	// arguments and text (0: loop's defaults); the smaller holds.
	MaxToolCallBytes, MaxReplyBytes Value[int]
}

// Sandbox holds the [sandbox] settings: the defaults of --sandbox and
// --sandbox-network, and what commands get besides the defaults.
type Sandbox struct {
	Mode, Network Value[string]
	// Env names more environment variables commands get (never secrets).
	Env Value[[]string]
	// Writable are more directories commands may write (~/ allowed).
	Writable Value[[]string]
	// ReadHidden are more files and directories commands cannot read (~/
	// allowed), besides the credentials they never read: the user file's
	// and then the project file's, which may add to them but take nothing
	// away.
	ReadHidden Value[[]string]
}

// UI holds the [ui] settings: how `agentteam chat` shows itself.
type UI struct {
	// Plain runs chat in lines (the default of --plain).
	Plain Value[bool]
}

// Context holds the [context] settings: the instruction files agents are
// given (internal/plug/agentsmd). A project file's count without trust: they
// name markdown files of the project, read as the agents' own reads are,
// and widen nothing an agent may do.
type Context struct {
	// Files are more names looked for after AGENTS.md: the user file's and
	// then the project file's, in that order.
	Files Value[[]string]
	// MaxBytes bounds the text taken of them; where both files set it, the smaller holds.
	MaxBytes Value[int]
}

// File is one config file agentteam looks for.
type File struct {
	// Path is where it is looked for; "" when there is no place for it (no
	// HOME and no XDG_CONFIG_HOME for the user file).
	Path  string
	Found bool
	// Source names it in `agentteam config`'s output.
	Source Source
	// Trusted says, of the project file, whether the person trusts its
	// bytes (held.go); the user file needs no trust.
	Trusted bool
}

// Config is what the files say, merged: the project file's values win over
// the user file's, key by key.
type Config struct {
	User, Project File
	// ProviderName is the default provider: provider = "NAME", or the only
	// provider defined; "" when the files define none.
	ProviderName Value[string]
	Providers    map[string]*Provider
	Roles        map[string]Value[Role]
	Team         Team
	Permissions  Permissions
	Sandbox      Sandbox
	UI           UI
	Context      Context
	// Held is what the project file says that waits for the person's trust.
	Held Held
	// MCP are the MCP servers, by name (the project's once trusted).
	MCP map[string]MCPServer
	// Hooks are the hook commands, the user file's first (the project's
	// once trusted).
	Hooks []hooks.Hook
}

// Found reports whether either file exists.
func (c *Config) Found() bool { return c.User.Found || c.Project.Found }

// Provider is the default provider, or nil when the files define none.
func (c *Config) Provider() *Provider {
	if c.ProviderName.V == "" {
		return nil
	}
	return c.Providers[c.ProviderName.V]
}

// RoleNames are the roles the files give a model, sorted.
func (c *Config) RoleNames() []string {
	names := make([]string, 0, len(c.Roles))
	for n := range c.Roles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Options say where to look for the files.
type Options struct {
	// Workspace is the directory whose .agentteam/config.toml is the project file.
	Workspace string
	// Getenv reads XDG_CONFIG_HOME and HOME for the user file.
	Getenv func(string) string
}

// UserPath is the user file's path, or "" when neither XDG_CONFIG_HOME
// (absolute, as the XDG spec asks) nor HOME is set.
func UserPath(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "agentteam", "config.toml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "agentteam", "config.toml")
	}
	return ""
}

// ProjectPath is the project file's path in workspace.
func ProjectPath(workspace string) string {
	if workspace == "" {
		workspace = "."
	}
	return filepath.Join(workspace, ".agentteam", "config.toml")
}

// Load reads and checks both files and merges them. Missing files are no
// error; anything wrong in one is an *Error naming the file, key and line.
func Load(opts Options) (*Config, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := &Config{
		User:      File{Path: UserPath(getenv)},
		Project:   File{Path: ProjectPath(opts.Workspace), Source: projectSource},
		Providers: map[string]*Provider{},
		Roles:     map[string]Value[Role]{},
	}
	c.User.Source = Source("user " + tildePath(c.User.Path, getenv("HOME")))
	var provLine location // where provider = "NAME" was set, for the check below
	for _, f := range []*File{&c.User, &c.Project} {
		raw, found, err := readFile(f.Path, f == &c.Project)
		if err != nil {
			return nil, err
		}
		f.Found = found
		if found {
			if f == &c.Project {
				c.holdUntrusted(raw, getenv, opts.Workspace)
			}
			c.merge(raw, f.Source, &provLine)
		}
	}
	if err := c.pickProvider(provLine); err != nil {
		return nil, err
	}
	c.splitRoles()
	return c, nil
}

// projectSource names the project file.
const projectSource Source = "project .agentteam/config.toml"

// location is where a key was set.
type location struct {
	path string
	line int
}

// merge lays one file's values over c's.
func (c *Config) merge(f *rawFile, src Source, provLine *location) {
	if f.Provider != nil {
		c.ProviderName = Value[string]{*f.Provider, src}
		*provLine = location{f.path, f.providerLine}
	}
	for name, rp := range f.Providers {
		p := c.Providers[name]
		if p == nil {
			p = &Provider{Name: name, Headers: map[string]Value[string]{}, Query: map[string]Value[string]{}}
			c.Providers[name] = p
		}
		p.from = src
		set(&p.BaseURL, rp.BaseURL, src)
		set(&p.APIKeyEnv, rp.APIKeyEnv, src)
		set(&p.Model, rp.Model, src)
		set(&p.Models, rp.Models, src)
		set(&p.Stream, rp.Stream, src)
		set(&p.MaxOutputTokens, rp.MaxOutputTokens, src)
		set(&p.ReasoningEffort, rp.ReasoningEffort, src)
		set(&p.APIKeyHeader, rp.APIKeyHeader, src)
		setDuration(&p.IdleTimeout, rp.IdleTimeout, src)
		set(&p.PriceInputPerMillion, rp.PriceInputPerMillion, src)
		set(&p.PriceOutputPerMillion, rp.PriceOutputPerMillion, src)
		set(&p.ContextWindow, rp.ContextWindow, src)
		for k, v := range rp.Headers {
			p.Headers[k] = Value[string]{v, src}
		}
		for k, v := range rp.Query {
			p.Query[k] = Value[string]{v, src}
		}
	}
	for role, model := range f.Roles {
		// Split into provider and model once every provider is known.
		c.Roles[role] = Value[Role]{Role{Model: model.Model, Labels: model.Labels}, src}
	}
	t := &c.Team
	set(&t.MaxWorkers, f.Team.MaxWorkers, src)
	set(&t.MaxQueue, f.Team.MaxQueue, src)
	set(&t.MaxTurns, f.Team.MaxTurns, src)
	set(&t.AutoClaim, f.Team.AutoClaim, src)
	set(&t.Isolation, f.Team.Isolation, src)
	set(&t.GitRemote, f.Team.GitRemote, src)
	set(&t.Store, f.Team.Store, src)
	tighter(&t.MaxModelCalls, f.Team.MaxModelCalls, src)
	tighter(&t.MaxTokens, f.Team.MaxTokens, src)
	tighter(&t.MaxCost, f.Team.MaxCost, src)
	tighter(&t.MaxToolCallBytes, f.Team.MaxToolCallBytes, src)
	tighter(&t.MaxReplyBytes, f.Team.MaxReplyBytes, src)
	setDuration(&t.ShutdownTimeout, f.Team.ShutdownTimeout, src)
	setDuration(&t.PlanTimeout, f.Team.PlanTimeout, src)
	setDuration(&t.HandoffTimeout, f.Team.HandoffTimeout, src)
	setDuration(&t.IdleTimeout, f.Team.IdleTimeout, src)
	c.Permissions.merge(&f.Permissions, src)
	sb := &c.Sandbox
	set(&sb.Mode, f.Sandbox.Mode, src)
	set(&sb.Network, f.Sandbox.Network, src)
	if f.Sandbox.Env != nil {
		sb.Env = Value[[]string]{f.Sandbox.Env, src}
	}
	if f.Sandbox.Writable != nil {
		sb.Writable = Value[[]string]{f.Sandbox.Writable, src}
	}
	if f.Sandbox.ReadHidden != nil {
		sb.ReadHidden = Value[[]string]{slices.Concat(sb.ReadHidden.V, f.Sandbox.ReadHidden), src}
	}
	set(&c.UI.Plain, f.UI.Plain, src)
	if f.Context.Files != nil {
		c.Context.Files = Value[[]string]{slices.Concat(c.Context.Files.V, f.Context.Files), src}
	}
	tighter(&c.Context.MaxBytes, f.Context.MaxBytes, src)
	c.mergeMCP(f, src)
	c.mergeHooks(f, src)
}

// tighter sets a budget's bound unless one already set is smaller (0 is none).
func tighter[T int | float64](dst *Value[T], v *T, src Source) {
	if v != nil && *v > 0 && (!dst.IsSet() || dst.V <= 0 || *v < dst.V) {
		*dst = Value[T]{*v, src}
	}
}

func set[T any](dst *Value[T], v *T, src Source) {
	if v != nil {
		*dst = Value[T]{*v, src}
	}
}

// setDuration takes a duration the file check has already parsed.
func setDuration(dst *Value[time.Duration], v *string, src Source) {
	if v != nil {
		d, _ := time.ParseDuration(*v)
		*dst = Value[time.Duration]{d, src}
	}
}

// pickProvider settles the default provider: the one named, or the only one.
func (c *Config) pickProvider(at location) error {
	if name := c.ProviderName.V; c.ProviderName.IsSet() {
		if c.Providers[name] == nil {
			return &Error{Path: at.path, Line: at.line, Msg: fmt.Sprintf(
				"provider = %q names no [providers.%s] table (defined: %s)", name, name, list(c.providerNames()))}
		}
		return nil
	}
	switch names := c.providerNames(); len(names) {
	case 0:
		return nil
	case 1:
		c.ProviderName = Value[string]{names[0], c.Providers[names[0]].from}
		return nil
	default:
		path := c.User.Path
		if c.Project.Found {
			path = c.Project.Path
		}
		return &Error{Path: path, Msg: fmt.Sprintf(
			"providers %s are defined but none is the default: add provider = \"NAME\" at the top of a config file", list(names))}
	}
}

// splitRoles reads "provider/model" where the part before the first slash
// names a provider; otherwise the whole text is a model of the default
// provider (model ids such as "meta-llama/Llama-3-70b" contain slashes).
func (c *Config) splitRoles() {
	for name, v := range c.Roles {
		if p, m, ok := strings.Cut(v.V.Model, "/"); ok && c.Providers[p] != nil {
			v.V = Role{Provider: p, Model: m, Labels: v.V.Labels}
			c.Roles[name] = v
		}
	}
}

func (c *Config) providerNames() []string {
	names := make([]string, 0, len(c.Providers))
	for n := range c.Providers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func list(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// tildePath writes path under home as ~/...
func tildePath(path, home string) string {
	if path == "" {
		return "(no HOME)"
	}
	if home != "" {
		if rel, err := filepath.Rel(home, path); err == nil && !strings.HasPrefix(rel, "..") {
			return "~/" + filepath.ToSlash(rel)
		}
	}
	return path
}

// UserStore is [team] store of the user file alone: the commands that read
// no other setting take where the team's state lives from it, and a broken
// project file does not stop them.
func UserStore(getenv func(string) string) (Value[string], error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	path := UserPath(getenv)
	raw, found, err := readFile(path, false)
	if err != nil || !found || raw.Team.Store == nil {
		return Value[string]{}, err
	}
	return Value[string]{*raw.Team.Store, Source("user " + tildePath(path, getenv("HOME")))}, nil
}
