package launch

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/demo"
	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/workspace"
)

// DefaultModel is used when neither --model nor AGENTTEAM_MODEL is set.
const DefaultModel = "gpt-4o-mini"

// modelSet is the team's team.Models: it builds each agent's model client
// from the flags and the config files, one client per provider and model,
// shared by every agent that uses it. The default provider takes the
// flags' settings (--model, --base-url, --no-stream), which the files lie
// under; any other provider takes its own [providers.NAME] table.
type modelSet struct {
	g       *GlobalOptions
	onRetry func(llm.Retry)
	idle    time.Duration

	mu      sync.Mutex
	clients map[string]models.ModelChoice // by label
}

// NewModels builds the set and the default model: the demo model, or an
// OpenAI-compatible server with the key from OPENAI_API_KEY (or the
// variable the provider's api_key_env names).
func NewModels(g *GlobalOptions, onRetry func(llm.Retry)) (*modelSet, models.ModelChoice, error) {
	idle, _, err := idleTimeout(g)
	if err != nil {
		return nil, models.ModelChoice{}, err
	}
	s := &modelSet{g: g, onRetry: onRetry, idle: idle, clients: map[string]models.ModelChoice{}}
	c, err := s.Model("", "")
	if err != nil {
		return nil, models.ModelChoice{}, err
	}
	return s, c, nil
}

// cfg is what the files say; empty without a file.
func (s *modelSet) cfg() *config.Config {
	if s.g.Config != nil {
		return s.g.Config
	}
	return &config.Config{}
}

// defaultProvider is the default provider's name; "" when no file names one.
func (s *modelSet) defaultProvider() string { return s.cfg().ProviderName.V }

// Model is the client for model of provider (team.Models). model may be
// written "provider/model" when provider is "".
func (s *modelSet) Model(provider, model string) (models.ModelChoice, error) {
	provider, model = strings.TrimSpace(provider), strings.TrimSpace(model)
	if p, m, ok := strings.Cut(model, "/"); ok && (provider == "" || provider == p) && s.cfg().Providers[p] != nil {
		provider, model = p, m
	}
	if s.g.Demo {
		if model == "" {
			model = "demo"
		}
		return s.client(provider, model, func() (llm.Model, *models.Price, error) {
			return llm.NewClient(llm.ClientConfig{
				BaseURL: demo.BaseURL, APIKey: "demo", Model: model,
				HTTPClient: demo.NewHTTPClient(), Stream: true, OnRetry: s.onRetry,
			}), nil, nil
		})
	}
	def := s.defaultProvider()
	if provider == "" {
		provider = def
	}
	p := s.cfg().Providers[provider]
	if provider != def && p == nil {
		return models.ModelChoice{}, fmt.Errorf("provider %q is not configured: %s", provider, s.configured())
	}
	if model == "" {
		model = s.providerModel(provider)
		if model == "" {
			return models.ModelChoice{}, fmt.Errorf("provider %s names no model: add model = \"MODEL\" to its [providers.%s] table", provider, provider)
		}
	}
	if !slices.Contains(s.modelsOf(provider), model) {
		return models.ModelChoice{}, fmt.Errorf("model %s is not configured: %s", quoteLabel(provider, model), s.configured())
	}
	return s.client(provider, model, func() (llm.Model, *models.Price, error) { return s.build(provider, model) })
}

// client is the shared choice for provider/model, built once.
func (s *modelSet) client(provider, model string, build func() (llm.Model, *models.Price, error)) (models.ModelChoice, error) {
	label := models.ModelChoice{Provider: provider, Name: model}.Label()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.clients[label]; ok {
		return c, nil
	}
	m, price, err := build()
	if err != nil {
		return models.ModelChoice{}, err
	}
	c := models.ModelChoice{Model: m, Provider: provider, Name: model, Price: price}
	if p := s.cfg().Providers[provider]; p != nil {
		c.ContextWindow, c.ReplyReserve = p.ContextWindow.V, p.MaxOutputTokens.V
	}
	s.clients[label] = c
	return c, nil
}

// build makes the client of a configured provider and model.
func (s *modelSet) build(provider, model string) (llm.Model, *models.Price, error) {
	g := s.g
	p := s.cfg().Providers[provider]
	if p == nil {
		p = &config.Provider{}
	}
	cc := llm.ClientConfig{Model: model, IdleTimeout: s.idle, OnRetry: s.onRetry, MaxOutputTokens: p.MaxOutputTokens.V,
		ReasoningEffort: p.ReasoningEffort.V, KeyHeader: p.APIKeyHeader.V, Query: values(p.Query),
		MaxCallArgs: s.cfg().Team.MaxToolCallBytes.V, MaxReplyText: s.cfg().Team.MaxReplyBytes.V}
	if p.IdleTimeout.IsSet() && g.Getenv(idleTimeoutEnv) == "" {
		cc.IdleTimeout = p.IdleTimeout.V // the provider's own, over [team]'s
	}
	keyEnv := DefaultKeyEnv
	if p.APIKeyEnv.V != "" {
		keyEnv = p.APIKeyEnv.V
	}
	if provider == s.defaultProvider() {
		// The flags (and the environment) lie over the default provider's table.
		cc.BaseURL, cc.Stream, cc.Headers, keyEnv = g.BaseURL, !g.NoStream, g.Headers(), g.APIKeyEnv()
	} else {
		cc.BaseURL, cc.Stream, cc.Headers = p.BaseURL.V, s.stream(p), headersOf(p)
	}
	key := g.Getenv(keyEnv)
	if key == "" {
		return nil, nil, missingKey(keyEnv)
	}
	cc.APIKey, cc.KeyEnv = key, keyEnv
	return llm.NewClient(cc), priceOf(p), nil
}

// missingKey says how to give the key that keyEnv should hold.
func missingKey(keyEnv string) error {
	if keyEnv == DefaultKeyEnv {
		return &exit.Error{Code: exit.Failure, Err: fmt.Errorf(
			"OPENAI_API_KEY is not set: export OPENAI_API_KEY=<your key> (with --base-url for a server other than OpenAI), or add --demo to use the built-in offline model")}
	}
	return &exit.Error{Code: exit.Failure, Err: fmt.Errorf(
		"%s is not set: export %s=<your key> (the config's api_key_env names it; agentteam config shows where), or add --demo to use the built-in offline model", keyEnv, keyEnv)}
}

// stream is whether a provider other than the default streams: its own
// setting, unless --no-stream turns streaming off for all.
func (s *modelSet) stream(p *config.Provider) bool {
	def := s.cfg().Provider()
	// g.NoStream comes from the flag unless the default provider's file said stream = false.
	flagOff := s.g.NoStream && (def == nil || !def.Stream.IsSet() || def.Stream.V)
	if flagOff {
		return false
	}
	return !p.Stream.IsSet() || p.Stream.V
}

func headersOf(p *config.Provider) map[string]string {
	h := map[string]string{}
	for k, v := range p.Headers {
		h[k] = v.V
	}
	return h
}

// priceOf is the provider's price when both of its prices are set; nil
// otherwise, so a cost is never computed from a price nobody gave.
func priceOf(p *config.Provider) *models.Price {
	if !p.PriceInputPerMillion.IsSet() || !p.PriceOutputPerMillion.IsSet() {
		return nil
	}
	return &models.Price{InputPerMillion: p.PriceInputPerMillion.V, OutputPerMillion: p.PriceOutputPerMillion.V}
}

// providerModel is a provider's default model: for the default provider
// what --model settled (flag, env, file or built-in default).
func (s *modelSet) providerModel(provider string) string {
	if provider == s.defaultProvider() {
		return s.g.Model
	}
	return s.cfg().Providers[provider].Model.V
}

// modelsOf are the models configured for provider: its default, its
// models list, and the models roles give it.
func (s *modelSet) modelsOf(provider string) []string {
	var out []string
	add := func(m string) {
		if m != "" && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	add(s.providerModel(provider))
	if p := s.cfg().Providers[provider]; p != nil {
		add(p.Model.V)
		for _, m := range p.Models.V {
			add(m)
		}
	}
	for _, name := range s.cfg().RoleNames() {
		r := s.cfg().Roles[name].V
		if r.Provider == provider || (r.Provider == "" && provider == s.defaultProvider()) {
			add(r.Model)
		}
	}
	return out
}

// providers are the configured providers, the default first.
func (s *modelSet) providers() []string {
	def := s.defaultProvider()
	out := []string{def}
	for _, n := range slices.Sorted(maps.Keys(s.cfg().Providers)) {
		if n != def {
			out = append(out, n)
		}
	}
	return out
}

// configured names every configured model, for an error's sentence.
func (s *modelSet) configured() string {
	var labels []string
	for _, m := range s.Catalog().Models {
		labels = append(labels, m.Label)
	}
	return "the configured models are " + strings.Join(labels, ", ") +
		" (a provider's models = [...] in the config file adds more; agentteam config shows the files)"
}

func quoteLabel(provider, model string) string {
	return fmt.Sprintf("%q", models.ModelChoice{Provider: provider, Name: model}.Label())
}

// ForRole is the model [roles] gives role (team.Models); a role written
// in other capitals matches too.
func (s *modelSet) ForRole(role string) (string, string, bool) {
	roles := s.cfg().Roles
	r, ok := roles[role]
	if !ok {
		for name, v := range roles {
			if strings.EqualFold(name, strings.TrimSpace(role)) {
				r, ok = v, true
				break
			}
		}
	}
	if !ok {
		return "", "", false
	}
	return r.V.Provider, r.V.Model, true
}

// Catalog is every configured model and the roles' models (team.Models).
func (s *modelSet) Catalog() models.Catalog {
	c := models.Catalog{Roles: map[string]string{}}
	if s.g.Demo {
		c.Default = "demo"
		c.Models = []models.CatalogModel{{Label: "demo"}}
		for name, r := range s.cfg().Roles {
			c.Roles[name] = r.V.String()
		}
		return c
	}
	def := s.defaultProvider()
	for _, prov := range s.providers() {
		var price *models.Price
		if p := s.cfg().Providers[prov]; p != nil {
			price = priceOf(p)
		}
		for _, m := range s.modelsOf(prov) {
			c.Models = append(c.Models, models.CatalogModel{Label: models.ModelChoice{Provider: prov, Name: m}.Label(), Price: price})
		}
	}
	c.Default = models.ModelChoice{Provider: def, Name: s.g.Model}.Label()
	for name, r := range s.cfg().Roles {
		p := r.V.Provider
		if p == "" {
			p = def
		}
		c.Roles[name] = models.ModelChoice{Provider: p, Name: r.V.Model}.Label()
	}
	return c
}

// OpenWorkspace resolves --workspace.
func OpenWorkspace(g *GlobalOptions) (*workspace.Workspace, error) {
	ws, err := workspace.Open(g.Workspace)
	if err == nil {
		err = ws.CheckState() // read-only commands too: never read state through a link
	}
	if err != nil {
		return nil, &exit.Error{Code: exit.Failure, Err: err}
	}
	return ws, nil
}
