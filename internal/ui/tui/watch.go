package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/termbg"
	"github.com/agentteam/agentteam/team"
)

// WatchConfig is what Watch needs: the stores of a team another process
// runs, and what the person's input does there.
type WatchConfig struct {
	// Engine sends the person's messages and answers; what only the
	// running process can do it refuses in a sentence.
	Engine   engine.Engine
	Mail     pollInboxes
	Registry *team.Registry
	// Events follows the team's event log from its last few events.
	Events *team.EventFollower
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
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := NewBridge()
	cfg.Screen.HasModel = true
	cfg.Screen.LightBackground = termbg.Light()
	profile := ColourProfile(cfg.Out, os.Environ())
	cfg.Screen.Colour = profile > colorprofile.ASCII
	act := newActor()
	m := New(runCtx, cfg.Screen, cfg.Engine, act.do)
	p := tea.NewProgram(m, tea.WithContext(runCtx), tea.WithInput(cfg.In), tea.WithOutput(cfg.Out), tea.WithColorProfile(profile))
	poll := newPoller(cfg.Mail, cfg.Registry, func() int { return 0 })
	b.setObserver(func(e team.Event) {
		switch e.Payload.(type) {
		case team.MessageDelivered, team.StatusChanged, team.Spawn, team.Answer:
			poll.poke()
		}
	})
	var wg sync.WaitGroup
	for _, run := range []func(){
		func() { b.Run(runCtx, p.Send, DebounceInterval) },
		func() { poll.run(runCtx, p.Send, PollInterval) },
		func() { act.run(runCtx, p.Send) },
		func() { followLog(runCtx, cfg, b.Event, p.Send) },
	} {
		wg.Add(1)
		go func() { defer wg.Done(); run() }()
	}
	_, perr := p.Run()
	cancel()
	wg.Wait()
	if perr != nil && !errors.Is(perr, tea.ErrProgramKilled) && !errors.Is(perr, context.Canceled) {
		return fmt.Errorf("the terminal UI failed: %w", perr)
	}
	return nil
}

// followLog hands the log's events to emit as they are written, and says
// in the lead's pane when the process running the team stops or starts.
func followLog(ctx context.Context, cfg WatchConfig, emit func(team.Event), send func(tea.Msg)) {
	running := cfg.Running == nil || cfg.Running(ctx)
	lastLook := time.Now()
	for {
		evs, err := cfg.Events.Next(ctx)
		for _, e := range evs {
			emit(e)
		}
		if err != nil {
			send(noteMsg{text: err.Error(), isErr: true, toLead: true})
		}
		if cfg.Running != nil && time.Since(lastLook) >= time.Second {
			lastLook = time.Now()
			if now := cfg.Running(ctx); now != running {
				running = now
				send(noteMsg{text: WatchedRunning(now), toLead: true})
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(PollInterval):
		}
	}
}

// WatchedRunning is the sentence a watch says when the process running
// the team stops (running false) or one runs it again.
func WatchedRunning(running bool) string {
	if running {
		return "a process runs the team again: its events show here"
	}
	return "no process runs the team now: messages wait in the inboxes until one does (quit and run agentteam chat to run it here)"
}
