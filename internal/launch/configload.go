package launch

import (
	"cmp"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/loop/llm"
)

// DefaultKeyEnv holds the API key when no provider names another variable.
const DefaultKeyEnv = "OPENAI_API_KEY"

// DefaultBaseURL is go-openai's, used when nothing sets one.
const DefaultBaseURL = "https://api.openai.com/v1"

// Setting is one effective setting and where it came from.
type Setting struct {
	Name   string `json:"name"`
	Value  any    `json:"value"`
	Source string `json:"source"`
	// Set says, for api_key_env, whether that variable holds a key (never the key).
	Set *bool `json:"set,omitempty"`
}

// WithConfig makes c read the config files before it runs, under its flags,
// and still run c's own pre-run after.
func WithConfig(g *GlobalOptions, c *cobra.Command) {
	prevE, prev := c.PreRunE, c.PreRun
	c.PreRunE = func(c *cobra.Command, args []string) error {
		if _, err := LoadConfig(c, g); err != nil {
			return err
		}
		switch {
		case prevE != nil:
			return prevE(c, args)
		case prev != nil:
			prev(c, args)
		}
		return nil
	}
}

// LoadConfig reads the config files and lays them under c's flags: a flag
// the user did not give takes the files' value unless the environment
// variable it reads is set. It returns every effective setting. A file that
// cannot be used is bad usage (exit 2).
func LoadConfig(c *cobra.Command, g *GlobalOptions) ([]Setting, error) {
	cfg, err := config.Load(config.Options{Workspace: g.Workspace, Getenv: g.Getenv})
	if err != nil {
		return nil, &exit.Error{Code: exit.Usage, Err: err}
	}
	if cfg.Found() {
		g.Config = cfg
	}
	r := &resolver{fs: c.Flags(), getenv: g.Getenv}
	r.add("workspace", g.Workspace, r.flagOrEnv("workspace", "AGENTTEAM_WORKSPACE"))
	if g.Demo {
		// The built-in model needs no provider.
		r.add("demo", true, config.Flag)
	} else {
		r.provider(g, cfg)
	}
	t := cfg.Team
	for _, k := range []struct {
		name, flag string
		file       string
		from       config.Source
	}{
		{"team.max_workers", "max-workers", strconv.Itoa(t.MaxWorkers.V), t.MaxWorkers.From},
		{"team.max_queue", "max-queue", strconv.Itoa(t.MaxQueue.V), t.MaxQueue.From},
		{"team.max_turns", "max-turns", strconv.Itoa(t.MaxTurns.V), t.MaxTurns.From},
		{"team.shutdown_timeout", "shutdown-timeout", t.ShutdownTimeout.V.String(), t.ShutdownTimeout.From},
		{"team.plan_timeout", "plan-timeout", t.PlanTimeout.V.String(), t.PlanTimeout.From},
		{"team.handoff_timeout", "handoff-timeout", t.HandoffTimeout.V.String(), t.HandoffTimeout.From},
		{"team.auto_claim", "auto-claim", strconv.FormatBool(t.AutoClaim.V), t.AutoClaim.From},
		{"team.isolation", "isolation", t.Isolation.V, t.Isolation.From},
		{"team.git_remote", "git-remote", t.GitRemote.V, t.GitRemote.From},
		{"team.max_model_calls", "max-model-calls", strconv.Itoa(t.MaxModelCalls.V), t.MaxModelCalls.From},
		{"team.max_tokens", "max-tokens", strconv.Itoa(t.MaxTokens.V), t.MaxTokens.From},
		{"team.max_cost", "max-cost", strconv.FormatFloat(t.MaxCost.V, 'f', -1, 64), t.MaxCost.From},
		{"sandbox.mode", "sandbox", cfg.Sandbox.Mode.V, cfg.Sandbox.Mode.From},
		{"sandbox.network", "sandbox-network", cfg.Sandbox.Network.V, cfg.Sandbox.Network.From},
		{"ui.plain", "plain", strconv.FormatBool(cfg.UI.Plain.V), cfg.UI.Plain.From},
	} {
		r.layer(k.name, k.flag, "", k.file, k.from)
	}
	if r.fs.Lookup("sandbox") != nil {
		optional(r, "sandbox.env", cfg.Sandbox.Env)
		optional(r, "sandbox.writable", cfg.Sandbox.Writable)
		optional(r, "sandbox.read_hidden", cfg.Sandbox.ReadHidden)
	}
	optional(r, "context.files", cfg.Context.Files)
	optional(r, "context.max_bytes", cfg.Context.MaxBytes)
	if !g.Demo {
		if d, src, err := idleTimeout(g); err != nil {
			r.err = cmp.Or(r.err, err)
		} else {
			r.add("idle_timeout", d.String(), src)
		}
	}
	for _, name := range cfg.RoleNames() {
		role := cfg.Roles[name]
		r.add("roles."+name, role.V.String(), role.From)
	}
	addPermissions(r, cfg.Permissions)
	addHeld(r, cfg.Held)
	return r.out, r.err
}

// provider settles the model client's settings from the default provider.
func (r *resolver) provider(g *GlobalOptions, cfg *config.Config) {
	p := cfg.Provider()
	if p == nil {
		p = &config.Provider{}
		r.add("provider", nil, config.Default)
	} else {
		r.add("provider", p.Name, cfg.ProviderName.From)
	}
	r.layer("model", "model", "AGENTTEAM_MODEL", p.Model.V, p.Model.From)
	if src := r.layer("", "base-url", "OPENAI_BASE_URL", p.BaseURL.V, p.BaseURL.From); src != "" {
		base := g.BaseURL
		if base == "" {
			base = DefaultBaseURL
		}
		r.add("base_url", RedactURL(base), src)
	}
	g.KeyEnv = p.APIKeyEnv.V
	keySet := g.Getenv(g.APIKeyEnv()) != ""
	r.out = append(r.out, Setting{Name: "api_key_env", Value: g.APIKeyEnv(), Source: string(orDefault(p.APIKeyEnv.From)), Set: &keySet})
	if src := r.layer("", "no-stream", "", strconv.FormatBool(!p.Stream.V), p.Stream.From); src != "" {
		r.add("stream", !g.NoStream, src)
	}
	for _, h := range slices.Sorted(maps.Keys(p.Headers)) {
		r.add("headers."+h, p.Headers[h].V, p.Headers[h].From)
	}
	optional(r, "api_key_header", p.APIKeyHeader)
	for _, q := range slices.Sorted(maps.Keys(p.Query)) {
		r.add("query."+q, p.Query[q].V, p.Query[q].From)
	}
	optional(r, "models", p.Models)
	optional(r, "max_output_tokens", p.MaxOutputTokens)
	optional(r, "reasoning_effort", p.ReasoningEffort)
	optional(r, "price_input_per_million", p.PriceInputPerMillion)
	optional(r, "price_output_per_million", p.PriceOutputPerMillion)
}

// resolver collects the effective settings while it lays the files' values
// under the flags.
type resolver struct {
	fs     *pflag.FlagSet
	getenv func(string) string
	out    []Setting
	err    error
}

func (r *resolver) add(name string, v any, src config.Source) {
	r.out = append(r.out, Setting{Name: name, Value: v, Source: string(src)})
}

// flagOrEnv is where a flag's value came from when no file can set it.
func (r *resolver) flagOrEnv(flag, env string) config.Source {
	if f := r.fs.Lookup(flag); f != nil && f.Changed {
		return config.Flag
	}
	if env != "" && r.getenv(env) != "" {
		return config.Env(env)
	}
	return config.Default
}

// layer settles one flag-backed setting: the flag when given, else its
// environment variable, else the files' value (written into the flag, so
// the command's Options hold it), else the flag's default. It adds the
// setting under name (unless name is "") and returns its source; "" when
// the command has no such flag, which leaves the setting out.
func (r *resolver) layer(name, flag, env, file string, from config.Source) config.Source {
	f := r.fs.Lookup(flag)
	if f == nil {
		return ""
	}
	src := r.flagOrEnv(flag, env)
	if src == config.Default && from != "" {
		if err := f.Value.Set(file); err != nil && r.err == nil {
			r.err = fmt.Errorf("apply %s from %s: %w", flag, from, err)
		}
		src = from
	}
	if name != "" {
		r.add(name, flagValue(f), src)
	}
	return src
}

// flagValue is a flag's value typed for JSON.
func flagValue(f *pflag.Flag) any {
	s := f.Value.String()
	switch f.Value.Type() {
	case "int":
		if n, err := strconv.Atoi(s); err == nil {
			return n
		}
	case "bool":
		if b, err := strconv.ParseBool(s); err == nil {
			return b
		}
	case "float64":
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return s
}

// optional adds a provider setting that has no flag and may be unset.
func optional[T any](r *resolver, name string, v config.Value[T]) {
	if v.IsSet() {
		r.add(name, v.V, v.From)
	} else {
		r.add(name, nil, config.Default)
	}
}

func orDefault(s config.Source) config.Source {
	if s == "" {
		return config.Default
	}
	return s
}

// APIKeyEnv is the environment variable that holds the API key.
func (g *GlobalOptions) APIKeyEnv() string {
	if g.KeyEnv != "" {
		return g.KeyEnv
	}
	return DefaultKeyEnv
}

// Provider is the default provider of the config files; nil without one.
func (g *GlobalOptions) Provider() *config.Provider {
	if g.Config == nil {
		return nil
	}
	return g.Config.Provider()
}

// Headers are the default provider's extra HTTP headers.
func (g *GlobalOptions) Headers() map[string]string {
	if g.Provider() == nil {
		return nil
	}
	return values(g.Provider().Headers)
}

// values drops where each value came from.
func values(m map[string]config.Value[string]) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v.V
	}
	return out
}

// idleTimeoutEnv bounds how long a reply may go without a byte before it is
// asked again.
const idleTimeoutEnv = "AGENTTEAM_IDLE_TIMEOUT"

// idleTimeout is the effective idle timeout and where it came from: the
// environment, else the provider's idle_timeout, else [team]'s (each from
// the project file over the user file), else llm.DefaultIdleTimeout.
func idleTimeout(g *GlobalOptions) (time.Duration, config.Source, error) {
	if v := g.Getenv(idleTimeoutEnv); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, "", &exit.Error{Code: exit.Usage, Err: fmt.Errorf("%s=%q is not a duration such as 90s or 5m", idleTimeoutEnv, v)}
		}
		return d, config.Env(idleTimeoutEnv), nil
	}
	if p := g.Provider(); p != nil && p.IdleTimeout.IsSet() {
		return p.IdleTimeout.V, p.IdleTimeout.From, nil
	}
	if g.Config != nil && g.Config.Team.IdleTimeout.IsSet() {
		return g.Config.Team.IdleTimeout.V, g.Config.Team.IdleTimeout.From, nil
	}
	return llm.DefaultIdleTimeout, config.Default, nil
}

// RedactURL hides a password a base URL given by flag or environment may hold.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}

// addPermissions lists what the files say in [permissions] (the command's
// own default mode and the flags are decided when it runs).
func addPermissions(r *resolver, p config.Permissions) {
	if p.Mode.IsSet() {
		r.add("permissions.mode", string(p.Mode.V), p.Mode.From)
	}
	if p.Timeout.IsSet() {
		r.add("permissions.timeout", p.Timeout.V.String(), p.Timeout.From)
	}
	for _, l := range []struct {
		name string
		es   []permission.Entry
	}{{"allow", p.Allow}, {"ask", p.Ask}, {"deny", p.Deny}} {
		for _, e := range l.es {
			r.add("permissions."+l.name, e.Rule.String(), config.Source(e.From))
		}
	}
}

// addHeld lists, for `agentteam config`, what an untrusted project file
// says that is ignored.
func addHeld(r *resolver, h config.Held) {
	ignored := func(src config.Source) config.Source {
		return src + ", not trusted: ignored until agentteam trust"
	}
	if h.Mode.IsSet() {
		r.add("permissions.mode", string(h.Mode.V), h.Mode.From+", not trusted: applies only where it asks at least as much as the mode it replaces")
	}
	for _, e := range h.Allow {
		r.add("permissions.allow", e.Rule.String(), ignored(config.Source(e.From)))
	}
	for _, l := range []struct {
		name string
		v    config.Value[[]string]
	}{{"sandbox.env", h.Env}, {"sandbox.writable", h.Writable}} {
		if l.v.IsSet() {
			r.add(l.name, l.v.V, ignored(l.v.From))
		}
	}
	if h.Network.IsSet() {
		r.add("sandbox.network", h.Network.V, ignored(h.Network.From))
	}
}
