package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/termbg"
	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
)

// Config is what Run needs: the team to open and what the screen says.
type Config struct {
	// Team is opened by Run; its OnEvent and OnDelta are set to the Bridge.
	Team team.Options
	// Bridge takes the engine's events; made by the caller so that the
	// model client's OnRetry can reach it before the team exists.
	Bridge *bridge.Bridge
	Screen Options
	In     io.Reader
	Out    io.Writer
}

// Run opens the team, runs the TUI until the person quits, then stops the
// teammates (status shutdown) and closes the team. The terminal is restored
// before the teammates are stopped.
func Run(ctx context.Context, cfg Config) error {
	b := cfg.Bridge
	if b == nil {
		b = bridge.New()
	}
	cfg.Team.OnEvent = b.Event
	cfg.Team.OnDelta = b.Delta
	tm, err := team.Open(ctx, cfg.Team)
	if err != nil {
		return err
	}
	b.SetTeam(tm)
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()

	var chat *team.Chat
	if cfg.Screen.HasModel {
		chat = tm.StartChat(runCtx, cfg.Screen.Auto)
	}
	cfg.Screen.MaxWorkers = tm.MaxWorkers()
	cfg.Screen.WorkerID = tm.WorkerID()
	if cfg.Screen.HasModel {
		cfg.Screen.ModelName = tm.Models().Lead() // a resumed lead's may differ from the default
	}
	for _, mod := range tm.Models().Catalog().Models {
		cfg.Screen.ModelLabels = append(cfg.Screen.ModelLabels, mod.Label)
	}
	looker := poll.ForTeam(tm, cfg.Team.MCP, func() int { return tm.Models().LeadUsage().Tokens }) // with what a resumed lead used before
	perr := runScreen(runCtx, screenRun{opts: cfg.Screen, eng: engine.NewEngine(tm, chat), in: cfg.In, out: cfg.Out, bridge: b, poll: looker})
	cancel()
	if chat != nil {
		<-chat.Done()
	}
	tm.ShutdownAll("the person quit")
	closing, stop := context.WithTimeout(context.WithoutCancel(ctx), team.CloseTimeout)
	defer stop()
	cerr := tm.Close(closing)
	if perr != nil {
		return perr
	}
	return cerr
}

// screenRun is one run of the screen: its options and engine, the
// terminal, and what feeds it (the bridge's events, the poller's looks,
// and any more goroutines, each given the program's Send).
type screenRun struct {
	opts    Options
	eng     engine.Engine
	in      io.Reader
	out     io.Writer
	bridge  *bridge.Bridge
	poll    *poll.Poller
	feeders []func(ctx context.Context, send func(tea.Msg))
}

// runScreen runs the program until the person quits, and returns once
// everything that fed it has ended; a failure of the terminal is the error.
func runScreen(ctx context.Context, r screenRun) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.opts.LightBackground = termbg.Light()
	profile := ColourProfile(r.out, os.Environ())
	r.opts.Colour = profile > colorprofile.ASCII
	act := newActor()
	m := New(ctx, r.opts, r.eng, act.do)
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithInput(r.in), tea.WithOutput(r.out), tea.WithColorProfile(profile))
	b, looker := r.bridge, r.poll
	b.SetObserver(func(e event.Event) {
		switch e.Payload.(type) {
		case event.MessageDelivered, event.StatusChanged, event.Spawn, event.Answer:
			looker.Poke()
		}
	})
	var wg sync.WaitGroup
	feeders := append([]func(context.Context, func(tea.Msg)){
		func(ctx context.Context, send func(tea.Msg)) { b.Run(ctx, send, bridge.DebounceInterval) },
		func(ctx context.Context, send func(tea.Msg)) { looker.Run(ctx, send, poll.Interval) },
		act.run,
	}, r.feeders...)
	for _, feed := range feeders {
		wg.Add(1)
		go func() { defer wg.Done(); feed(ctx, p.Send) }()
	}
	_, perr := p.Run()
	cancel()
	wg.Wait()
	if perr != nil && !errors.Is(perr, tea.ErrProgramKilled) && !errors.Is(perr, context.Canceled) {
		return fmt.Errorf("the terminal UI failed: %w", perr)
	}
	return nil
}

// ColourProfile is what out shows, decided once: Bubble Tea's detection
// (NO_COLOR, TERM, COLORTERM…), and, as termenv did for Bubble Tea v1, no
// colour under CI (a set CI is a log, not a person's terminal). Lip Gloss v2
// styles always carry their colours; the program takes them out on the way
// to a terminal of this profile.
func ColourProfile(out io.Writer, env []string) colorprofile.Profile {
	p := colorprofile.Detect(out, env)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CI="); ok && v != "" && p > colorprofile.ASCII {
			p = colorprofile.ASCII
		}
	}
	return p
}

// NoModelNotice is the first message when there is no key and no --demo;
// keyEnv names the variable the key is read from.
func NoModelNotice(keyEnv string) string {
	return "No model: " + keyEnv + " is not set, so the lead cannot answer yet. " +
		"Quit (ctrl+c), then export " + keyEnv + "=<your key>" + baseURLHint(keyEnv) + " and start agentteam chat again, " +
		"or run agentteam chat --demo for the built-in offline model. Meanwhile /team, /inbox, /send, /spawn, /approve, /shutdown and /tasks work."
}

// baseURLHint: OPENAI_API_KEY alone points at OpenAI; a provider's own
// variable comes with its base_url from the config.
func baseURLHint(keyEnv string) string {
	if keyEnv == "OPENAI_API_KEY" {
		return " (add --base-url for a server other than OpenAI)"
	}
	return " (the config's api_key_env names it; agentteam config shows where)"
}
