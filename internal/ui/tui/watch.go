package tui

import (
	"context"
	"io"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// WatchConfig is what Watch needs: the stores of a team another process
// runs, and what the person's input does there.
type WatchConfig struct {
	// Engine sends the person's messages and answers; what only the
	// running process can do it refuses in a sentence.
	Engine   engine.Engine
	Mail     poll.Inboxes
	Registry *registry.Registry
	// Events follows the team's event log from its last few events.
	Events *event.EventFollower
	// Running reports whether a process still runs the team; the watch
	// says once when it stops and when one runs it again.
	Running func(ctx context.Context) bool
	Screen  Options // Screen.Watch says who runs the team
	In      io.Reader
	Out     io.Writer
}

// Watch runs the TUI on a team another process runs, until the person
// quits: the team, its messages and what the lead and its teammates do
// as the event log tells it; the person's lines go to the lead's inbox.
// Nothing of the team is started or stopped.
func Watch(ctx context.Context, cfg WatchConfig) error {
	cfg.Screen.HasModel = true
	b := bridge.New()
	return runScreen(ctx, screenRun{opts: cfg.Screen, eng: cfg.Engine, in: cfg.In, out: cfg.Out, bridge: b,
		poll: poll.New(cfg.Mail, cfg.Registry, func() int { return 0 }),
		feeders: []func(context.Context, func(tea.Msg)){
			func(ctx context.Context, send func(tea.Msg)) { followLog(ctx, cfg, b.Event, send) },
		}})
}

// followLog hands the log's events to emit as they are written, and says
// in the lead's pane when the process running the team stops or starts.
func followLog(ctx context.Context, cfg WatchConfig, emit func(event.Event), send func(tea.Msg)) {
	engine.Follow(ctx, cfg.Events, cfg.Running, emit, func(text string, isErr bool) {
		send(noteMsg{text: text, isErr: isErr, toLead: true})
	})
}
