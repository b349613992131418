package launch

import "github.com/agentteam/agentteam/internal/sys/config"

// GlobalOptions are the flags every command takes.
type GlobalOptions struct {
	Workspace  string
	Model      string
	BaseURL    string
	MaxWorkers int
	MaxQueue   int
	Demo       bool
	JSON       bool
	Quiet      bool
	NoStream   bool
	// Store is where the team's state lives: "" (the files, unless the
	// user's config says) or nats://HOST:PORT[/TEAM] (ParseStore).
	Store string
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string

	// From the config files (LoadConfig), zero when there are none.
	// KeyEnv names the variable holding the API key ("" is OPENAI_API_KEY).
	KeyEnv string
	// Config is what the files say (roles, prices…); nil without a file.
	Config *config.Config
}
