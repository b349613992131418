package cmd

import (
	"fmt"

	"github.com/agentteam/agentteam/internal/demo"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/workspace"
)

// DefaultModel is used when neither --model nor AGENTTEAM_MODEL is set.
const DefaultModel = "gpt-4o-mini"

// newModel builds the model client from the flags: the demo model, or an
// OpenAI-compatible server with the key from OPENAI_API_KEY.
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
	key := g.Getenv("OPENAI_API_KEY")
	if key == "" {
		return nil, "", &ExitError{Code: ExitFailure, Err: fmt.Errorf(
			"OPENAI_API_KEY is not set: export OPENAI_API_KEY=<your key> (with --base-url for a server other than OpenAI), or add --demo to use the built-in offline model")}
	}
	return loop.NewClient(loop.ClientConfig{
		BaseURL: g.BaseURL,
		APIKey:  key,
		Model:   g.Model,
		Stream:  true,
		OnRetry: onRetry,
	}), g.Model, nil
}

// openWorkspace resolves --workspace.
func openWorkspace(g *GlobalOptions) (*workspace.Workspace, error) {
	ws, err := workspace.Open(g.Workspace)
	if err != nil {
		return nil, &ExitError{Code: ExitFailure, Err: err}
	}
	return ws, nil
}
