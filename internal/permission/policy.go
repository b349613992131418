package permission

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
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
	if e := find(p.Deny, c, true); e != nil {
		return Verdict{Decision: Deny, Entry: e, Why: ruleWhy("deny", e)}
	}
	if e := find(p.AskRules, c, true); e != nil {
		return Verdict{Decision: Ask, Entry: e, Why: ruleWhy("ask", e)}
	}
	if e := allowed(p.Allow, c); e != nil {
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

// find returns the first entry matching c. For a command, broad also
// matches any piece of it, so a deny rule `bash(rm *)` catches
// `ls; rm -rf x` and `echo $(rm x)`.
func find(es []Entry, c Call, broad bool) *Entry {
	for i := range es {
		e := &es[i]
		if e.Rule.matches(c) {
			return e
		}
		if broad && c.Kind == Exec && e.Rule.Tool == c.Tool {
			for _, piece := range pieces(c.Subject) {
				if e.Rule.matches(Call{Tool: c.Tool, Kind: Exec, Subject: piece}) {
					return e
				}
			}
		}
	}
	return nil
}

// allowed returns the allow entry that lets c run. A command is allowed
// by a rule without wildcards only when it is exactly that command; by
// patterns only when each of its pieces matches one and it holds no
// substitution or redirection (`go test * ` must not allow
// `go test x; rm -rf ~` nor `go test $(rm x)` nor `go test > ~/.bashrc`).
func allowed(es []Entry, c Call) *Entry {
	if c.Kind != Exec {
		return find(es, c, false)
	}
	cmd := strings.TrimSpace(c.Subject)
	for i := range es {
		e := &es[i]
		if e.Rule.Tool != c.Tool {
			continue
		}
		if e.Rule.Any || (!strings.Contains(e.Rule.Pattern, "*") && strings.TrimSpace(e.Rule.Pattern) == cmd) {
			return e
		}
	}
	if risky().MatchString(cmd) {
		return nil
	}
	var first *Entry
	for _, piece := range pieces(cmd) {
		e := find(es, Call{Tool: c.Tool, Kind: Exec, Subject: piece}, false)
		if e == nil {
			return nil
		}
		if first == nil {
			first = e
		}
	}
	return first
}

// risky are the shell constructs that run or write more than the command's
// words say.
var risky = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`|\\$\\(|<\\(|>\\(|>|\\\\\n") })

// separators split a command line into the commands it runs.
var separators = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("[;&|\n()`{}]|\\$\\(") })

// pieces are the simple commands of a command line, split on the shell's
// separators (quotes are not understood: a quoted ";" splits too, which
// only makes allowing stricter and denying broader).
func pieces(cmd string) []string {
	var out []string
	for _, p := range separators().Split(cmd, -1) {
		p = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(p), "!$"))
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Suggest is the narrowest rule that would allow c: the exact command, or
// the exact path.
func Suggest(c Call) Rule {
	if c.Subject == "" {
		return Rule{Tool: c.Tool, Any: true}
	}
	return Rule{Tool: c.Tool, Pattern: c.Subject}
}
