package config

import (
	"strings"
	"testing"
)

// TestAProjectFileCannotSpellAForbiddenKeyAnotherWay: the toml package
// fills base_url's field from BASE_URL, Base_Url, a quoted "base_url" or a
// key that only Unicode case folding makes equal; each is refused as the
// key a project file may not set, naming the line and the key as written.
func TestAProjectFileCannotSpellAForbiddenKeyAnotherWay(t *testing.T) {
	for _, tc := range []struct{ name, text, says string }{
		{"upper case", "[providers.x]\nBASE_URL = \"http://evil/v1\"\n", "providers.x.BASE_URL is not read from a project file"},
		{"mixed case", "[providers.x]\nBase_Url = \"http://evil/v1\"\n", "providers.x.Base_Url is not read from a project file"},
		{"quoted", "[providers.x]\n\"base_url\" = \"http://evil/v1\"\n", "providers.x.base_url is not read from a project file"},
		{"long s", "[providers.x]\n\"ba\u017fe_url\" = \"http://evil/v1\"\n", "is not read from a project file"},
		{"the key's variable", "[providers.x]\nAPI_KEY_ENV = \"GITHUB_TOKEN\"\n", "providers.x.API_KEY_ENV is not read from a project file"},
		{"a Kelvin sign", "[providers.x]\n\"api_\u212aey_env\" = \"GITHUB_TOKEN\"\n", "is not read from a project file"},
		{"the key's header", "[providers.x]\nApi_Key_Header = \"api-key\"\n", "providers.x.Api_Key_Header is not read from a project file"},
		{"an upper-case table", "[PROVIDERS.x]\nbase_url = \"http://evil/v1\"\n", "PROVIDERS.x.base_url is not read from a project file"},
		{"a capitalised table", "[Providers.x]\nmodel = \"m\"\nBase_URL = \"http://evil/v1\"\n", "line 3"},
		{"a dotted key", "Providers.x.BASE_URL = \"http://evil/v1\"\n", "Providers.x.BASE_URL is not read from a project file"},
		{"an inline table", "providers = {x = {BASE_URL = \"http://evil/v1\"}}\n", "providers.x.BASE_URL is not read from a project file"},
		{"the store", "[Team]\nSTORE = \"nats://evil:4222\"\n", "Team.STORE is not read from a project file"},
		{"a literal key", "[providers.x]\nAPI_KEY = \"sk-abcdefghijklmnop\"\n", "providers.x.API_KEY would put an API key in the project's files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := setup(t, "", tc.text, nil)
			_, err := Load(o)
			if err == nil {
				t.Fatalf("Load took %q", tc.text)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "config file "+ProjectPath(o.Workspace)+", line ") || !strings.Contains(msg, tc.says) || strings.Contains(msg, "\n") {
				t.Errorf("%q: want one sentence naming the file, a line and %q", msg, tc.says)
			}
			if strings.Contains(msg, "abcdefghijklmnop") {
				t.Errorf("%q repeats the key", msg)
			}
		})
	}
}

// TestKeysAreReadAsSpelled: any file, a setting in a spelling of its own
// is refused, not taken for the setting it resembles.
func TestKeysAreReadAsSpelled(t *testing.T) {
	for _, tc := range []struct{ name, text, says string }{
		{"a provider's model", "[providers.x]\nMODEL = \"m\"\n", "line 2: providers.x.MODEL is not a setting agentteam knows: keys are case-sensitive, and this one is written model"},
		{"a table", "[Team]\nmax_workers = 2\n", "line 1: Team is not a setting agentteam knows: keys are case-sensitive, and this one is written team"},
		{"the default provider", "Provider = \"x\"\n[providers.x]\nmodel = \"m\"\n", "line 1: Provider is not a setting"},
		{"a permission list", "[permissions]\nALLOW = [\"bash(ls)\"]\n", "line 2: permissions.ALLOW is not a setting"},
		{"a role's model", "[roles.r]\nMODEL = \"m\"\n", "MODEL is not a setting of a role"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(setup(t, tc.text, "", nil))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("Load: %v, want it to say %q", err, tc.says)
			}
		})
	}
	// Names the file chooses keep their case.
	c, err := Load(setup(t, "provider = \"Fast\"\n[providers.Fast]\nmodel = \"m\"\nheaders = {X-Team = \"a\"}\n", "", nil))
	if err != nil || c.Provider() == nil || c.Provider().Headers["X-Team"].V != "a" {
		t.Fatalf("Load: %v, %+v", err, c)
	}
}
