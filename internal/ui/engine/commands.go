package engine

import "strings"

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

// Command is a parsed slash command line.
type Command struct {
	Name string
	Rest string // everything after the name
}

// ParseCommand splits "/send bob hi there" into its name and n arguments,
// the last taking the rest of the line.
func ParseCommand(line string) Command {
	line = strings.TrimSpace(line)
	name, rest, _ := strings.Cut(line, " ")
	if i := strings.IndexAny(name, "\n"); i >= 0 {
		name, rest = name[:i], name[i+1:]+" "+rest
	}
	return Command{Name: strings.ToLower(name), Rest: strings.TrimSpace(rest)}
}

// Split takes n arguments from c.Rest, the last getting whatever is left.
func (c Command) Split(n int) []string {
	var out []string
	rest := c.Rest
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
