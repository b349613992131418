package tui

import (
	"fmt"
	"sort"
	"strings"
)

// slashCommand is one of the slash commands the input understands.
type slashCommand struct {
	name, args, help string
}

// slashCommands in the order /help lists them.
var slashCommands = []slashCommand{
	{"/help", "", "this list of commands (? lists the keys)"},
	{"/team", "", "the registry: every teammate's status, turns, unread"},
	{"/inbox", "[name]", "every inbox's counts, or one inbox's messages"},
	{"/send", "name text", "put a message in a teammate's (or the lead's) inbox"},
	{"/broadcast", "text", "a message to every teammate"},
	{"/spawn", "[--plan] name role prompt", "start a teammate yourself (--plan: read-only until you approve its plan)"},
	{"/approve", "name [feedback]", "approve the plan a teammate waits with"},
	{"/reject", "name feedback", "send a teammate's plan back to be revised"},
	{"/shutdown", "name [reason]", "ask a teammate to shut down"},
	{"/allow", "[id]", "allow a tool call waiting for permission once (keys: y, A for always, n to deny)"},
	{"/always", "[id]", "allow it, and every identical call (adds the rule to .agentteam/config.toml)"},
	{"/deny", "id reason", "refuse a tool call waiting for permission; the agent reads why"},
	{"/tasks", "", "the task board: id, status, owner, blocked by, subject"},
	{"/focus", "[name]", "a teammate's conversation, typing to its inbox; alone: the lead's"},
	{"/merge", "name", "merge a teammate's branch (isolation worktree) into the lead's branch"},
	{"/diff", "[name]", "a worktree teammate's change (the focused one's without a name)"},
	{"/auto", "on|off", "whether the lead wakes by itself when teammates report"},
	{"/reasoning", "[on|off]", "show the models' reasoning whole, or one line per reply (ctrl+t)"},
	{"/diffs", "[on|off]", "show every write's diff whole, or one line per write (ctrl+g)"},
	{"/init", "", "ask the lead to write AGENTS.md: the project's instructions for agents"},
	{"/model", "[provider/]name", "switch the lead's model for its next turns; alone: the configured models"},
	{"/copy", "", "put the last reply (the focused teammate's last message) on the clipboard (OSC 52)"},
	{"/mouse", "[on|off]", "capture the mouse for the wheel, or release it so the terminal selects text (default)"},
	{"/sessions", "[ID | find TEXT]", "list the lead's conversations; with an id, switch the lead to that one; find: those whose title holds TEXT"},
	{"/compact", "", "summarize the older half of the lead's conversation now (the session file keeps it all)"},
	{"/cost", "", "each agent's model, tokens and cost so far, and the team's"},
	{"/clear", "", "clear the conversation pane (the conversation itself stays)"},
	{"/quit", "", "stop the teammates and leave"},
}

// command is a parsed slash command line.
type command struct {
	name string
	rest string // everything after the name
}

// parseCommand splits "/send bob hi there" into its name and n arguments,
// the last taking the rest of the line.
func parseCommand(line string) command {
	line = strings.TrimSpace(line)
	name, rest, _ := strings.Cut(line, " ")
	if i := strings.IndexAny(name, "\n"); i >= 0 {
		name, rest = name[:i], name[i+1:]+" "+rest
	}
	return command{name: strings.ToLower(name), rest: strings.TrimSpace(rest)}
}

// split takes n arguments from c.rest, the last getting whatever is left.
func (c command) split(n int) []string {
	var out []string
	rest := c.rest
	for len(out) < n-1 {
		rest = strings.TrimLeft(rest, " \t")
		word, more, found := strings.Cut(rest, " ")
		if word == "" {
			break
		}
		out = append(out, word)
		rest = more
		if !found {
			rest = ""
			break
		}
	}
	if rest = strings.TrimSpace(rest); rest != "" {
		out = append(out, rest)
	}
	return out
}

// helpText lists the commands; keysText the keys.
func helpText() string {
	var b strings.Builder
	b.WriteString("Commands (tab completes):\n")
	for _, c := range slashCommands {
		fmt.Fprintf(&b, "  %-32s  %s\n", strings.TrimSpace(c.name+" "+c.args), c.help) // two spaces: the gap a wrapped row hangs at
	}
	// The keys are ?'s: with them /help no longer fits a 50-row screen.
	b.WriteString("? (with the input empty) lists the keys.")
	return b.String()
}

// keysText lists every key; ? shows it (the help bar says esc closes it).
func keysText() string {
	var b strings.Builder
	for _, k := range allKeys {
		fmt.Fprintf(&b, "  %-18s  %s\n", k[0], k[1]) // two spaces: the gap a wrapped row hangs at
	}
	return strings.TrimRight(b.String(), "\n")
}

// complete finishes a slash command or a teammate's name at the end of the
// input; it returns the new input and the candidates when more than one fits.
// planNames are the teammates whose plan waits for review, the ones /approve
// and /reject are for; models are the configured models /model takes.
func complete(value string, names, planNames, models []string) (string, []string) {
	if !strings.HasPrefix(value, "/") || strings.Contains(value, "\n") {
		return value, nil
	}
	fields := strings.Split(value, " ")
	switch len(fields) {
	case 1:
		var cands []string
		for _, c := range slashCommands {
			if strings.HasPrefix(c.name, strings.ToLower(fields[0])) {
				cands = append(cands, c.name)
			}
		}
		return completeWord(value, fields[0], cands, "")
	case 2:
		cands := argCandidates(fields[0], names, planNames, models)
		var fit []string
		for _, c := range cands {
			if strings.HasPrefix(c, fields[1]) {
				fit = append(fit, c)
			}
		}
		return completeWord(value, fields[1], fit, fields[0]+" ")
	}
	return value, nil
}

// argCandidates are the words a command's first argument can be: the
// teammates for the commands that take a name, on/off for switches…
// planNames are the teammates whose plan waits for review, the ones
// /approve and /reject are for; models are the configured models.
func argCandidates(cmd string, names, planNames, models []string) []string {
	switch strings.ToLower(cmd) {
	case "/send", "/inbox", "/focus":
		return append([]string{"lead"}, names...)
	case "/auto", "/reasoning", "/mouse":
		return []string{"on", "off"}
	case "/shutdown", "/merge", "/diff":
		return names
	case "/approve", "/reject":
		if len(planNames) == 0 {
			return names
		}
		return planNames
	case "/spawn":
		return []string{planFlag}
	case "/model":
		return models
	}
	return nil
}

func completeWord(value, word string, cands []string, before string) (string, []string) {
	switch len(cands) {
	case 0:
		return value, nil
	case 1:
		return before + cands[0] + " ", nil
	}
	sort.Strings(cands)
	p := cands[0]
	for _, c := range cands[1:] {
		for !strings.HasPrefix(c, p) {
			p = p[:len(p)-1]
		}
	}
	if len(p) > len(word) {
		return before + p, cands
	}
	return value, cands
}
