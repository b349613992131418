package launch

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/internal/testutil/testfs"
	"github.com/agentteam/agentteam/team/models"
)

const resolverConfig = `
provider = "cheap"
[providers.cheap]
base_url = "http://cheap.example/v1"
api_key_env = "CHEAP_KEY"
model = "small"
models = ["small-2"]
price_input_per_million = 1
price_output_per_million = 2

[providers.smart]
base_url = "http://smart.example/v1"
api_key_env = "SMART_KEY"
model = "big"
price_input_per_million = 10

[providers.local]
base_url = "http://local.example/v1"
model = "free"

[roles]
reviewer = "smart/big"
writer = "small-3"
`

// resolverFor is a modelSet over the config text, with the flags as run
// would have settled them from it and env as the environment.
func resolverFor(t *testing.T, text string, env map[string]string, demo bool) *modelSet {
	t.Helper()
	home := t.TempDir()
	testfs.WriteFile(t, filepath.Join(home, ".config", "agentteam", "config.toml"), text)
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return env[k]
	}
	cfg, err := config.Load(config.Options{Workspace: t.TempDir(), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	g := &GlobalOptions{Getenv: getenv, Config: cfg, Demo: demo, Model: DefaultModel}
	if p := cfg.Provider(); p != nil {
		g.Model, g.BaseURL, g.KeyEnv = p.Model.V, p.BaseURL.V, p.APIKeyEnv.V
	}
	return &modelSet{g: g, clients: map[string]models.ModelChoice{}}
}

var bothKeys = map[string]string{"CHEAP_KEY": "c", "SMART_KEY": "s", "OPENAI_API_KEY": "o"}

func TestResolverPicksConfiguredModels(t *testing.T) {
	s := resolverFor(t, resolverConfig, bothKeys, false)
	cases := []struct {
		provider, model string
		label           string
		price           *models.Price
	}{
		{"", "", "cheap/small", &models.Price{InputPerMillion: 1, OutputPerMillion: 2}},
		{"", "small-2", "cheap/small-2", &models.Price{InputPerMillion: 1, OutputPerMillion: 2}},
		{"", "small-3", "cheap/small-3", &models.Price{InputPerMillion: 1, OutputPerMillion: 2}}, // a role's model is configured
		{"", "smart/big", "smart/big", nil},                                                      // only one of smart's prices: no cost
		{"smart", "", "smart/big", nil},
		{"local", "free", "local/free", nil},
		{" local ", "local/free", "local/free", nil},
	}
	for _, c := range cases {
		got, err := s.Model(c.provider, c.model)
		if err != nil {
			t.Errorf("Model(%q, %q): %v", c.provider, c.model, err)
			continue
		}
		if got.Label() != c.label || (got.Price == nil) != (c.price == nil) || (c.price != nil && *got.Price != *c.price) {
			t.Errorf("Model(%q, %q) = %s priced %v, want %s priced %v", c.provider, c.model, got.Label(), got.Price, c.label, c.price)
		}
	}
	// One client per provider and model, whoever asks.
	a, _ := s.Model("", "smart/big")
	b, _ := s.Model("smart", "big")
	if a.Model != b.Model {
		t.Error("two agents on smart/big got two clients")
	}
	if c, _ := s.Model("", ""); c.Model == a.Model {
		t.Error("cheap/small and smart/big share a client")
	}
}

func TestResolverRefusesWhatIsNotConfigured(t *testing.T) {
	s := resolverFor(t, resolverConfig, bothKeys, false)
	for _, c := range []struct{ provider, model, says string }{
		{"", "gpt-5-ultra", `model "cheap/gpt-5-ultra" is not configured`},
		{"smart", "small", `model "smart/small" is not configured`},
		{"nowhere", "", `provider "nowhere" is not configured`},
		{"", "nowhere/x", `model "cheap/nowhere/x" is not configured`},
	} {
		_, err := s.Model(c.provider, c.model)
		if err == nil {
			t.Errorf("Model(%q, %q) accepted", c.provider, c.model)
			continue
		}
		for _, want := range []string{c.says, "cheap/small", "cheap/small-2", "smart/big", "local/free"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("Model(%q, %q): %q does not say %q", c.provider, c.model, err, want)
			}
		}
	}
	// A provider whose key is not set: its own variable is named.
	s = resolverFor(t, resolverConfig, map[string]string{"CHEAP_KEY": "c"}, false)
	if _, err := s.Model("smart", ""); err == nil || !strings.Contains(err.Error(), "SMART_KEY is not set") {
		t.Errorf("smart without its key: %v", err)
	}
	// local names no key variable: OPENAI_API_KEY, as for the default.
	if _, err := s.Model("local", ""); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY is not set") {
		t.Errorf("local without a key: %v", err)
	}
}

func TestResolverRolesAndCatalog(t *testing.T) {
	s := resolverFor(t, resolverConfig, bothKeys, false)
	for role, want := range map[string][2]string{"reviewer": {"smart", "big"}, "Reviewer": {"smart", "big"}, "writer": {"", "small-3"}} {
		p, m, ok := s.ForRole(role)
		if !ok || [2]string{p, m} != want {
			t.Errorf("ForRole(%q) = %q, %q, %v; want %v", role, p, m, ok, want)
		}
	}
	if _, _, ok := s.ForRole("tester"); ok {
		t.Error("a role the config does not name has a model")
	}
	c := s.Catalog()
	var labels []string
	for _, m := range c.Models {
		labels = append(labels, m.Label)
	}
	if got := strings.Join(labels, " "); got != "cheap/small cheap/small-2 cheap/small-3 local/free smart/big" || c.Default != "cheap/small" {
		t.Errorf("catalog models %q, default %q", got, c.Default)
	}
	if c.Roles["reviewer"] != "smart/big" || c.Roles["writer"] != "cheap/small-3" {
		t.Errorf("catalog roles %v", c.Roles)
	}
}

func TestResolverWithoutConfig(t *testing.T) {
	s := resolverFor(t, "", map[string]string{"OPENAI_API_KEY": "o"}, false)
	c, err := s.Model("", "")
	if err != nil || c.Label() != DefaultModel || c.Price != nil {
		t.Fatalf("the default without a config: %s, %v", c.Label(), err)
	}
	if _, err := s.Model("", "other"); err == nil || !strings.Contains(err.Error(), "the configured models are "+DefaultModel) {
		t.Fatalf("another model without a config: %v", err)
	}
	// --demo takes any name, each its own shared client.
	d := resolverFor(t, "", nil, true)
	a, err := d.Model("", "whatever")
	if err != nil || a.Label() != "whatever" {
		t.Fatalf("demo: %s, %v", a.Label(), err)
	}
	if b, _ := d.Model("", "whatever"); b.Model != a.Model {
		t.Fatal("the demo built a second client for the same name")
	}
	if def, _ := d.Model("", ""); def.Label() != "demo" {
		t.Fatalf("the demo's default is %s", def.Label())
	}
}
