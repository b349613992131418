package permission

import (
	"fmt"
	"path"
	"strings"
)

// Mode is what happens to a call no rule speaks of.
type Mode string

// The modes.
const (
	// ModeAsk asks before every command and every write.
	ModeAsk Mode = "ask"
	// ModeAutoEdit allows writes inside the agent's root and asks before commands.
	ModeAutoEdit Mode = "auto-edit"
	// ModeYolo allows everything the rules do not deny or ask about.
	ModeYolo Mode = "yolo"
)

// Modes lists the modes, for help texts and errors.
var Modes = []Mode{ModeAsk, ModeAutoEdit, ModeYolo}

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if Mode(s) == m {
			return m, nil
		}
	}
	return "", fmt.Errorf("permission mode %q is not one of ask, auto-edit, yolo", s)
}

// Kind is what a tool call does to the world.
type Kind int

// Kinds of call.
const (
	Read  Kind = iota // reads, messages, the task board: never asked about by a mode
	Write             // changes a file; Subject is its path
	Exec              // runs a command; Subject is the command's text
)

// Call is one tool call as the policy sees it.
type Call struct {
	Tool string
	Kind Kind
	// Subject is the command for Exec, the slash-separated path relative to
	// the workspace for Write (and for file reads), "" otherwise.
	Subject string
	// InRoot: a write's target lies inside the agent's own root (its
	// worktree, or the workspace).
	InRoot bool
}

// Decision is what the policy says of a call.
type Decision string

// Decisions.
const (
	Allow Decision = "allow"
	Ask   Decision = "ask"
	Deny  Decision = "deny"
)

// Entry is a rule and where it was set (a config file, a flag, "always").
type Entry struct {
	Rule Rule
	From string
}

// Policy is a mode and the rules over it. Deny beats ask, ask beats
// allow, and a rule beats the mode.
type Policy struct {
	Mode            Mode
	Allow, AskRules []Entry
	Deny            []Entry
}

// Verdict is a decision and why.
type Verdict struct {
	Decision Decision
	// Entry is the rule that decided, nil when the mode did.
	Entry *Entry
	// Why is the reason in a few words ("deny rule bash(rm *) from flag").
	Why string
}

// Decide says whether c may run.
func (p Policy) Decide(c Call) Verdict {
	var ln *line
	if c.Kind == Exec {
		l := parseLine(c.Subject)
		ln = &l
	}
	if e := find(p.Deny, c, ln); e != nil {
		return Verdict{Decision: Deny, Entry: e, Why: ruleWhy("deny", e)}
	}
	if e := find(p.AskRules, c, ln); e != nil {
		return Verdict{Decision: Ask, Entry: e, Why: ruleWhy("ask", e)}
	}
	if ln != nil && ln.opaque != "" {
		// A deny rule that cannot see the command asks rather than lets it pass.
		e, list := patternFor(p.Deny, c.Tool), "deny"
		if e == nil {
			e, list = patternFor(p.AskRules, c.Tool), "ask"
		}
		if e != nil {
			return Verdict{Decision: Ask, Why: fmt.Sprintf("the command holds %s, which the %s cannot see into", ln.opaque, ruleWhy(list, e))}
		}
	}
	if e := allowed(p.Allow, c, ln); e != nil {
		return Verdict{Decision: Allow, Entry: e, Why: ruleWhy("allow", e)}
	}
	mode := p.Mode
	if mode == "" {
		mode = ModeAsk
	}
	switch {
	case c.Kind == Read:
		return Verdict{Decision: Allow, Why: "reads are always allowed"}
	case mode == ModeYolo:
		return Verdict{Decision: Allow, Why: "mode yolo"}
	case mode == ModeAutoEdit && c.Kind == Write && c.InRoot:
		return Verdict{Decision: Allow, Why: "mode auto-edit allows writes inside the agent's root"}
	case mode == ModeAutoEdit && c.Kind == Write:
		return Verdict{Decision: Ask, Why: "mode auto-edit asks before writes outside the agent's root"}
	}
	return Verdict{Decision: Ask, Why: fmt.Sprintf("mode %s asks before %s", mode, kindWords(c.Kind))}
}

func ruleWhy(list string, e *Entry) string {
	s := list + " rule " + e.Rule.String()
	if e.From != "" {
		s += " (" + e.From + ")"
	}
	return s
}

func kindWords(k Kind) string {
	if k == Exec {
		return "commands"
	}
	return "writes"
}

// find returns the first entry matching c. For a command it also matches
// each simple command the line runs (see line), so a deny rule `bash(rm *)`
// catches `ls; rm -rf x`, `echo $(rm x)`, `\\rm x`, `/bin/rm x` and
// `sudo rm x`.
func find(es []Entry, c Call, ln *line) *Entry {
	for i := range es {
		e := &es[i]
		if e.Rule.matches(c) {
			return e
		}
		if ln == nil || !e.Rule.toolMatches(c.Tool) {
			continue
		}
		for _, s := range ln.cmds {
			for _, text := range s.deny {
				if denyMatch(e.Rule.Pattern, text) {
					return e
				}
			}
		}
	}
	return nil
}

// denyMatch is commandMatch, and a pattern naming a command by its path
// (`/bin/rm *`) also matches it by its name alone.
func denyMatch(pattern, text string) bool {
	if commandMatch(pattern, text) {
		return true
	}
	head, rest, _ := strings.Cut(strings.TrimSpace(pattern), " ")
	if !strings.Contains(head, "/") || strings.ContainsAny(head, "*\\") {
		return false
	}
	return commandMatch(strings.TrimSpace(path.Base(head)+" "+rest), text)
}

// patternFor is the first rule of es for tool that has a pattern.
func patternFor(es []Entry, tool string) *Entry {
	for i := range es {
		if es[i].Rule.toolMatches(tool) && !es[i].Rule.Any {
			return &es[i]
		}
	}
	return nil
}

// allowed returns the allow entry that lets c run. A command is allowed
// by a rule without wildcards when it is exactly that command; otherwise
// only when each of its simple commands matches a rule and the parser
// pins all of them down: no eval, no computed argument, no write to a
// file (`go test *` must not allow `go test x; rm -rf ~` nor
// `go test $(rm x)` nor `go test > ~/.bashrc`).
func allowed(es []Entry, c Call, ln *line) *Entry {
	if c.Kind != Exec {
		return find(es, c, nil)
	}
	cmd := strings.TrimSpace(c.Subject)
	for i := range es {
		e := &es[i]
		if !e.Rule.toolMatches(c.Tool) {
			continue
		}
		if text, ok := exact(e.Rule.Pattern); e.Rule.Any || ok && text == cmd {
			return e
		}
	}
	if ln.opaque != "" || ln.writes || len(ln.cmds) == 0 {
		return nil
	}
	var first *Entry
	for _, s := range ln.cmds {
		if s.script {
			continue
		}
		e := allowOne(es, c.Tool, s)
		if e == nil {
			return nil
		}
		if first == nil {
			first = e
		}
	}
	return first
}

// allowOne is the first rule of es that allows one simple command.
func allowOne(es []Entry, tool string, s simple) *Entry {
	for i := range es {
		if !es[i].Rule.toolMatches(tool) {
			continue
		}
		for _, text := range s.allow {
			if commandMatch(es[i].Rule.Pattern, text) {
				return &es[i]
			}
		}
	}
	return nil
}

// Suggest is the narrowest rule that would allow c: the exact command, or
// the exact path, its wildcard characters escaped.
func Suggest(c Call) Rule {
	if c.Subject == "" {
		return Rule{Tool: c.Tool, Any: true}
	}
	return Rule{Tool: c.Tool, Pattern: Escape(c.Subject)}
}

// prefixPrograms are the programs whose commands SuggestPrefix widens: the
// word after them names what they do (go test, cargo build, npm run
// test), and that word is kept. Other programs get no prefix rule: for
// most, the first word alone (rm, curl, sudo) would allow far too much.
var prefixPrograms = map[string]int{
	"go": 2, "cargo": 2, "git": 2, "make": 2, "just": 2, "dotnet": 2, "uv": 2, "poetry": 2,
	"bundle": 2, "rake": 2, "mix": 2, "swift": 2, "zig": 2, "gradle": 2, "mvn": 2,
	"npm": 2, "pnpm": 2, "yarn": 2, "bun": 2, "deno": 2,
	"pytest": 1, "tox": 1, "jest": 1, "vitest": 1,
}

// SuggestPrefix is a wider rule than Suggest for a command, for a person
// who would rather not be asked again while the team runs: the command's
// program and subcommand followed by anything ("go test *" for `go test
// ./pkg/...`, "npm run test *" for `npm run test -- -u`). ok is false when
// c is not one plain command of such a program (a list, a pipeline, a
// redirection, a wrapper, a computed word, an option before the
// subcommand). A list that holds another command still asks for that one:
// rules allow each command of a line on its own.
func SuggestPrefix(c Call) (Rule, bool) {
	if strings.HasPrefix(c.Tool, "mcp__") && c.Kind == Exec {
		return Rule{Tool: c.Tool, Any: true}, true // an MCP server's tool: the tool, whatever its arguments
	}
	if c.Kind != Exec {
		return Rule{}, false
	}
	ln := parseLine(c.Subject)
	if ln.opaque != "" || ln.writes || len(ln.cmds) != 1 || len(ln.cmds[0].allow) != 1 || ln.cmds[0].script {
		return Rule{}, false
	}
	words := strings.Fields(ln.cmds[0].allow[0])
	n, known := prefixPrograms[words[0]]
	if !known || len(words) < n {
		return Rule{}, false
	}
	if n == 2 && (words[1] == "run" || words[1] == "run-script") && strings.Contains("npm pnpm yarn bun deno", words[0]) {
		n = 3 // the script's name: npm run test
	}
	if len(words) < n {
		return Rule{}, false
	}
	for _, w := range words[1:n] {
		if !subcommandWord(w) {
			return Rule{}, false
		}
	}
	return Rule{Tool: c.Tool, Pattern: Escape(strings.Join(words[:n], " ")) + " *"}, true
}

// subcommandWord reports whether w reads as a subcommand's or a script's
// name: letters, digits, '-', '_' and ':', not starting with '-'.
func subcommandWord(w string) bool {
	if w == "" || w[0] == '-' {
		return false
	}
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == ':') {
			return false
		}
	}
	return true
}
