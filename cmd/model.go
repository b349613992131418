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
	// The provider's headers, max_output_tokens and reasoning_effort are read
	// and shown by `agentteam config`, but loop.ClientConfig cannot carry them yet.
	return loop.NewClient(loop.ClientConfig{
		BaseURL: g.BaseURL,
		APIKey:  key,
		Model:   g.Model,
		Stream:  !g.NoStream,
		OnRetry: onRetry,
	}), g.Model, nil
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
