package cmd

import (
	"fmt"

	"github.com/agentteam/agentteam/internal/demo"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/workspace"
)

// DefaultModel is used when neither --model nor AGENTTEAM_MODEL is set.
const DefaultModel = "gpt-4o-mini"

// newModel builds the model client from the flags and the config files: the
// demo model, or an OpenAI-compatible server with the key from
// OPENAI_API_KEY (or the variable the provider's api_key_env names).
func newModel(g *GlobalOptions, onRetry func(loop.Retry)) (loop.Model, string, error) {
	if g.Demo {
		return loop.NewClient(loop.ClientConfig{
			BaseURL:    demo.BaseURL,
			APIKey:     "demo",
			Model:      "demo",
			HTTPClient: demo.NewHTTPClient(),
			Stream:     true,
			OnRetry:    onRetry,
		}), "demo", nil
	}
	keyEnv := g.keyEnv()
	key := g.Getenv(keyEnv)
	if key == "" && keyEnv == defaultKeyEnv {
		return nil, "", &ExitError{Code: ExitFailure, Err: fmt.Errorf(
			"OPENAI_API_KEY is not set: export OPENAI_API_KEY=<your key> (with --base-url for a server other than OpenAI), or add --demo to use the built-in offline model")}
	}
	if key == "" {
		return nil, "", &ExitError{Code: ExitFailure, Err: fmt.Errorf(
			"%s is not set: export %s=<your key> (the config's api_key_env names it; agentteam config shows where), or add --demo to use the built-in offline model", keyEnv, keyEnv)}
	}
	idle, _, err := idleTimeout(g)
	if err != nil {
		return nil, "", err
	}
	cfg := loop.ClientConfig{
		BaseURL:         g.BaseURL,
		APIKey:          key,
		KeyEnv:          keyEnv,
		Model:           g.Model,
		Stream:          !g.NoStream,
		Headers:         g.headers(),
		MaxOutputTokens: g.maxOutputTokens(),
		IdleTimeout:     idle,
		OnRetry:         onRetry,
	}
	if p := g.provider(); p != nil {
		cfg.ReasoningEffort, cfg.KeyHeader, cfg.Query = p.ReasoningEffort.V, p.APIKeyHeader.V, values(p.Query)
	}
	return loop.NewClient(cfg), g.Model, nil
}

// maxOutputTokens is the default provider's max_output_tokens; 0 unset.
func (g *GlobalOptions) maxOutputTokens() int {
	if g.Config == nil || g.Config.Provider() == nil {
		return 0
	}
	return g.Config.Provider().MaxOutputTokens.V
}

// openWorkspace resolves --workspace.
func openWorkspace(g *GlobalOptions) (*workspace.Workspace, error) {
	ws, err := workspace.Open(g.Workspace)
	if err == nil {
		err = ws.CheckState() // read-only commands too: never read state through a link
	}
	if err != nil {
		return nil, &ExitError{Code: ExitFailure, Err: err}
	}
	return ws, nil
}
