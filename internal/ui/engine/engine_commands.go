package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/sessions"
	"github.com/agentteam/agentteam/tools"
)

// The slash commands whose work is one call of the Engine are checked and
// run here, apart from the screen, so that the line-mode chat
// (internal/ui/linechat) runs the very same commands as the TUI.

// Reply is what an engine command has to say.
type Reply struct {
	Text string
	// Hint marks a short confirmation (the TUI's help bar), not a note.
	Hint bool
	// Model is the lead's model label after /model switched it.
	Model string
	// Session is the id of the conversation /sessions ID switched the lead
	// to: the screen shows that conversation in place of the one it had.
	Session string
	// Sessions, from /sessions alone, are the conversations it listed.
	Sessions []sessions.Info
}

// EngineCall is one command's work against the engine; it may do file IO.
type EngineCall func(ctx context.Context, eng Engine) (Reply, error)

// CommandInfo is one slash command as /help lists it.
type CommandInfo struct{ Name, Args, Help string }

// Commands are the TUI's slash commands, in /help's order.
func Commands() []CommandInfo {
	out := make([]CommandInfo, len(slashCommands))
	for i, c := range slashCommands {
		out[i] = CommandInfo{Name: c.name, Args: c.args, Help: c.help}
	}
	return out
}

// EngineCommand parses a slash command line and, when its work is the
// engine's, returns that work. focus is the focused teammate ("" the lead);
// firstAsk is the id of the oldest permission ask waiting ("" none), the one
// /allow, /always and /deny answer without an id. A call that is nil with a
// nil error: the command is the screen's (/help, /quit …) or unknown.
func EngineCommand(line, focus, firstAsk string) (name string, call EngineCall, err error) {
	c := ParseCommand(line)
	call, err = CommandCall(c, focus, firstAsk)
	return c.Name, call, err
}

// CommandCall is EngineCommand for a parsed line.
func CommandCall(c Command, focus, firstAsk string) (EngineCall, error) {
	switch c.Name {
	case "/team":
		return textCall(func(ctx context.Context, eng Engine) (string, error) { return eng.Describe(ctx) }), nil
	case "/inbox":
		name := c.Rest
		return textCall(func(ctx context.Context, eng Engine) (string, error) { return eng.Inbox(ctx, name) }), nil
	case "/tasks":
		return textCall(func(ctx context.Context, eng Engine) (string, error) { return eng.Tasks(ctx) }), nil
	case "/sessions":
		return sessionsCall(c)
	case "/send":
		return sendCall(c)
	case "/broadcast":
		return broadcastCall(c)
	case "/spawn":
		return spawnCall(c)
	case "/approve":
		return reviewCall(c, true)
	case "/reject":
		return reviewCall(c, false)
	case "/shutdown":
		return shutdownCall(c)
	case "/allow", "/always", "/deny":
		return permissionCall(c, firstAsk)
	case "/merge":
		name := strings.TrimSpace(c.Rest)
		if name == "" || strings.Contains(name, " ") {
			return nil, errors.New("usage: /merge name")
		}
		return textCall(func(ctx context.Context, eng Engine) (string, error) { return eng.Merge(ctx, name) }), nil
	case "/diff":
		name := strings.TrimSpace(c.Rest)
		if name == "" {
			name = focus
		}
		if name == "" || strings.Contains(name, " ") {
			return nil, errors.New("usage: /diff name (or focus a teammate and /diff)")
		}
		return textCall(func(ctx context.Context, eng Engine) (string, error) { return eng.Diff(ctx, name) }), nil
	case "/model":
		return modelCall(c)
	case "/compact":
		return textCall(func(ctx context.Context, eng Engine) (string, error) { return eng.Compact() }), nil
	case "/cost":
		return textCall(func(ctx context.Context, eng Engine) (string, error) { return CostText(eng.Usage()), nil }), nil
	}
	return nil, nil
}

// CostText is /cost: each agent's model, tokens and cost, then the team's.
func CostText(u registry.TeamUsage) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tMODEL\tTOKENS\tIN\tOUT\tCOST")
	for _, a := range u.Agents {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\n", a.Agent, a.Model, a.Tokens, a.PromptTokens, a.CompletionTokens, models.FormatCost(a.Cost))
	}
	fmt.Fprintf(tw, "team\t\t%d\t%d\t%d\t%s\n", u.Total.Tokens, u.Total.PromptTokens, u.Total.CompletionTokens, models.FormatCost(u.Total.Cost))
	_ = tw.Flush()
	out := strings.TrimRight(b.String(), "\n")
	if len(u.Unpriced) > 0 {
		out += "\nNo price is configured for " + strings.Join(u.Unpriced, ", ") + ": the cost leaves them out (price_input_per_million in a provider)."
	}
	return out
}

// Toggle reads the argument of a command that turns a setting on or off:
// on, off, or nothing to switch it from cur.
func Toggle(name, arg string, cur bool) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(arg)) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	case "":
		return !cur, nil
	}
	return cur, fmt.Errorf("%s takes on or off", name)
}

// AutoWords say what /auto on or off does.
func AutoWords(on bool) string {
	if on {
		return "auto on: the lead wakes by itself when teammates report"
	}
	return "auto off: the lead answers only you; reports wait in its inbox"
}

// textCall is an engine call whose text is a note.
func textCall(fn func(ctx context.Context, eng Engine) (string, error)) EngineCall {
	return func(ctx context.Context, eng Engine) (Reply, error) {
		text, err := fn(ctx, eng)
		return Reply{Text: text}, err
	}
}

// hintCall is an engine call whose text is a short confirmation.
func hintCall(fn func(ctx context.Context, eng Engine) (string, error)) EngineCall {
	return func(ctx context.Context, eng Engine) (Reply, error) {
		text, err := fn(ctx, eng)
		return Reply{Text: text, Hint: true}, err
	}
}

// endedNoter is an Engine that can say a recipient has ended (the team's).
type endedNoter interface {
	EndedNote(ctx context.Context, to string) string
}

// sendCall is /send name text.
func sendCall(c Command) (EngineCall, error) {
	args := c.Split(2)
	if len(args) < 2 {
		return nil, errors.New("usage: /send name text")
	}
	to, text := args[0], args[1]
	return hintCall(func(ctx context.Context, eng Engine) (string, error) {
		if err := eng.Send(ctx, to, text); err != nil {
			return "", err
		}
		if n, ok := eng.(endedNoter); ok {
			if note := n.EndedNote(ctx, to); note != "" {
				return "sent to " + to + "'s inbox, but " + note, nil
			}
		}
		return "sent to " + to + "'s inbox", nil
	}), nil
}

// broadcastCall is /broadcast text.
func broadcastCall(c Command) (EngineCall, error) {
	if c.Rest == "" {
		return nil, errors.New("usage: /broadcast text")
	}
	text := c.Rest
	return hintCall(func(ctx context.Context, eng Engine) (string, error) {
		reached, err := eng.Broadcast(ctx, text)
		if err != nil {
			return "", err
		}
		return "broadcast to " + strings.Join(reached, ", "), nil
	}), nil
}

// spawnCall is /spawn [--plan] name role prompt.
func spawnCall(c Command) (EngineCall, error) {
	plan := false
	if first, rest, _ := strings.Cut(c.Rest, " "); first == PlanFlag {
		plan, c.Rest = true, strings.TrimSpace(rest)
	}
	args := c.Split(3)
	if len(args) < 3 {
		return nil, errors.New("usage: /spawn [--plan] name role prompt")
	}
	spec := tools.SpawnSpec{Name: args[0], Role: args[1], Prompt: args[2], PlanMode: plan}
	return hintCall(func(ctx context.Context, eng Engine) (string, error) {
		if err := eng.Spawn(ctx, spec); err != nil {
			return "", err
		}
		if spec.PlanMode {
			return fmt.Sprintf("spawned %s (%s) in plan mode: its plan will ask for your approval", spec.Name, spec.Role), nil
		}
		return fmt.Sprintf("spawned %s (%s)", spec.Name, spec.Role), nil
	}), nil
}

// reviewCall is /approve name [feedback] and /reject name feedback.
func reviewCall(c Command, approve bool) (EngineCall, error) {
	args := c.Split(2)
	if approve && len(args) < 1 {
		return nil, errors.New("usage: /approve name [feedback]")
	}
	if !approve && len(args) < 2 {
		return nil, errors.New("usage: /reject name feedback (say what to change)")
	}
	name, feedback := args[0], ""
	if len(args) > 1 {
		feedback = args[1]
	}
	return textCall(func(ctx context.Context, eng Engine) (string, error) {
		return eng.ReviewPlan(ctx, name, approve, feedback)
	}), nil
}

// PlanFlag before the name starts the teammate in plan mode.
const PlanFlag = "--plan"

// DefaultShutdownReason is what a teammate reads when the person gave none.
const DefaultShutdownReason = "the person asked for it from the chat"

// shutdownCall is /shutdown name [reason].
func shutdownCall(c Command) (EngineCall, error) {
	args := c.Split(2)
	if len(args) < 1 {
		return nil, errors.New("usage: /shutdown name [reason]")
	}
	name, reason := args[0], DefaultShutdownReason
	if len(args) > 1 {
		reason = args[1]
	}
	return textCall(func(ctx context.Context, eng Engine) (string, error) {
		return eng.Shutdown(ctx, name, reason)
	}), nil
}

// permissionCall is /allow [id], /always [id] and /deny id reason; an id
// left out is the first ask's.
func permissionCall(c Command, firstAsk string) (EngineCall, error) {
	args := c.Split(2)
	id := firstAsk
	if len(args) > 0 {
		id = args[0]
	}
	switch {
	case id == "":
		return nil, errors.New("no permission ask is waiting")
	case c.Name == "/deny" && len(args) < 2:
		return nil, errors.New("usage: /deny id reason (the agent reads why)")
	case c.Name == "/deny":
		return AnswerCall(id, false, false, args[1]), nil
	}
	return AnswerCall(id, true, c.Name == "/always", ""), nil
}

// AnswerCall answers a permission ask as the person.
func AnswerCall(id string, approve, always bool, reason string) EngineCall {
	return hintCall(func(ctx context.Context, eng Engine) (string, error) {
		return eng.AnswerPermission(ctx, id, approve, always, reason)
	})
}

// modelCall is /model: alone it lists what is configured, with a name it
// switches the lead's model for the turns that follow.
func modelCall(c Command) (EngineCall, error) {
	spec := c.Rest
	if spec == "" {
		return func(_ context.Context, eng Engine) (Reply, error) {
			cat, cur := eng.Models()
			return Reply{Text: ModelsText(cat, cur)}, nil
		}, nil
	}
	if strings.ContainsAny(spec, " \t\n") {
		return nil, errors.New("usage: /model [provider/]name (one word; /model alone lists the configured models)")
	}
	return func(_ context.Context, eng Engine) (Reply, error) {
		label, err := eng.SetLeadModel(spec)
		if err != nil {
			return Reply{}, err
		}
		return Reply{Text: "the lead talks to " + label + " from its next turn", Hint: true, Model: label}, nil
	}, nil
}

// sessionsCall is /sessions: alone it lists the lead's conversations, with
// an id it switches the lead to that one (the team stays as it is).
func sessionsCall(c Command) (EngineCall, error) {
	id := c.Rest
	if id == "" {
		return sessionsList, nil
	}
	if text, ok := strings.CutPrefix(id, "find "); ok && strings.TrimSpace(text) != "" {
		return sessionsFind(strings.TrimSpace(text)), nil
	}
	if strings.ContainsAny(id, " \t\n") {
		return nil, errors.New("usage: /sessions [ID] (one id; /sessions alone lists them; /sessions find TEXT those whose title holds TEXT)")
	}
	return func(ctx context.Context, eng Engine) (Reply, error) {
		s, ok := eng.(SessionSwitcher)
		if !ok {
			return Reply{}, errors.New("no sessions to switch to here")
		}
		if err := s.SwitchSession(ctx, id); err != nil {
			return Reply{}, err
		}
		r := Reply{Text: switchedWords(id), Session: id}
		if l, ok := eng.(SessionLister); ok {
			r.Sessions, _ = l.Sessions() // the ids have moved: completion offers the new ones
		}
		return r, nil
	}, nil
}

// switchedWords say what /sessions ID did.
func switchedWords(id string) string {
	return "switched the lead to conversation " + id + ": its next turn goes on from there; " +
		"the one before is kept as an earlier conversation (/sessions lists it). The teammates are the same team, untouched."
}

// sessionsFind is /sessions find TEXT: the conversations whose title (the
// name given, or the first thing said) holds text, any case.
func sessionsFind(text string) EngineCall {
	return func(ctx context.Context, eng Engine) (Reply, error) {
		r, err := sessionsList(ctx, eng)
		if err != nil {
			return r, err
		}
		var kept []sessions.Info
		for _, s := range r.Sessions {
			if strings.Contains(strings.ToLower(s.Title), strings.ToLower(text)) {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			return Reply{Text: fmt.Sprintf("no conversation's title holds %q (agentteam sessions --grep searches what was said)", text), Sessions: r.Sessions}, nil
		}
		return Reply{Text: FormatSessions(kept), Sessions: r.Sessions}, nil
	}
}

// sessionsList is /sessions alone: the lead's conversations, listed, and
// how to switch to one.
func sessionsList(_ context.Context, eng Engine) (Reply, error) {
	l, ok := eng.(SessionLister)
	if !ok {
		return Reply{}, errors.New("no sessions to list here")
	}
	list, err := l.Sessions()
	if err != nil {
		return Reply{}, err
	}
	return Reply{Text: FormatSessions(list), Sessions: list}, nil
}
