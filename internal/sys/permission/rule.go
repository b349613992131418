// Package permission decides whether an agent's tool call may run, must be
// asked about, or is denied: rules (allow / ask / deny per tool and
// argument pattern) over a mode. It is pure: it reads no file and knows
// no agent; the team gives it each call's tool, kind and subject.
//
// In a pattern `*` is a wildcard (within one directory for paths, `**`
// across them; `?` one character of a path), and `\*`, `\?` and `\\` are
// a literal `*`, `?` and `\`; any other backslash is itself. "Allow
// always" records the approved call with its wildcard characters escaped:
// `rm -f *.log` becomes `bash(rm -f \*.log)`, which allows that command
// and no other.
//
// A command is parsed as bash parses it and rules apply to each simple
// command it runs, its name freed of quotes, backslashes, a directory and
// wrappers (env, command, sudo, xargs, find -exec…). What the parser cannot
// pin down (eval, source, sh -c "$X", a computed command name, find
// -delete, a line that does not parse) no allow rule allows, and a deny or
// ask rule of the tool asks about. Rules still cannot see:
//   - a script file or program a command runs (`bash build.sh`, `make`,
//     `npm test`, git hooks and aliases), nor code handed to an interpreter
//     (`python -c`, `node -e`, `perl -e`);
//   - shell startup files (`bash -l`, `bash -i`, BASH_ENV) and aliases or
//     functions they define;
//   - a variable's value that the shell evaluates as arithmetic
//     (`(( a[$X] ))`) or a command's own options that run another
//     (`git -c core.pager=…`, `go test -exec …`): `bash(go test *)` allows
//     every argument to go test.
package permission

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Rule is one rule as written: `bash(go test *)`, `write_file(docs/**)`,
// or a bare tool name, which matches every call of that tool.
type Rule struct {
	Tool string
	// Pattern is the argument pattern; "" with Any set matches any call.
	Pattern string
	Any     bool
}

var toolRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]{0,63}$`) })

// serverRE is a rule for every tool of one MCP server: mcp__SERVER__* or
// mcp__SERVER (Claude Code's forms), its tools being mcp__SERVER__TOOL.
var serverRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^mcp__([A-Za-z0-9_-]+?)(__\*)?$`) })

// toolMatches reports whether the rule is for tool: its name, or for a
// rule of a whole MCP server, any of the server's tools.
func (r Rule) toolMatches(tool string) bool {
	if m := serverRE().FindStringSubmatch(r.Tool); m != nil && (m[2] != "" || !strings.Contains(m[1], "__")) {
		return strings.HasPrefix(tool, "mcp__"+m[1]+"__")
	}
	return r.Tool == tool
}

// ParseRule reads a rule as written in a config file or a flag.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, rest, hasArgs := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	server := serverRE().MatchString(name) && (strings.HasSuffix(name, "__*") || !strings.Contains(strings.TrimPrefix(name, "mcp__"), "__"))
	if !toolRE().MatchString(name) && !server {
		return Rule{}, fmt.Errorf("rule %q: write a tool name, optionally with a pattern, like \"bash(go test *)\" or \"write_file(docs/**)\", or an MCP server's tools as mcp__SERVER__*", s)
	}
	if !hasArgs {
		return Rule{Tool: name, Any: true}, nil
	}
	if server {
		return Rule{}, fmt.Errorf("rule %q: a rule for all of an MCP server's tools takes no pattern", s)
	}
	if !strings.HasSuffix(rest, ")") {
		return Rule{}, fmt.Errorf("rule %q: the pattern must end with \")\"", s)
	}
	pat := strings.TrimSuffix(rest, ")")
	if strings.TrimSpace(pat) == "" {
		return Rule{}, fmt.Errorf("rule %q: the pattern is empty (write the tool alone to match every call)", s)
	}
	if strings.ContainsAny(pat, "\x00\n\r") {
		return Rule{}, fmt.Errorf("rule %q: the pattern must be one line", s)
	}
	return Rule{Tool: name, Pattern: pat}, nil
}

// MustParseRule is ParseRule for rules written in code.
func MustParseRule(s string) Rule {
	r, err := ParseRule(s)
	if err != nil {
		panic(err)
	}
	return r
}

// String is the rule as written.
func (r Rule) String() string {
	if r.Any {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// MatchesEverything reports whether the rule matches every call of its
// tool: a bare name, or a pattern that is only wildcards.
func (r Rule) MatchesEverything() bool {
	return r.Any || strings.Trim(r.Pattern, "*/ ") == ""
}

// matches reports whether the rule matches one call, or, for a command,
// one of its pieces (see Call.pieces).
func (r Rule) matches(c Call) bool {
	if !r.toolMatches(c.Tool) {
		return false
	}
	if r.Any {
		return true
	}
	if c.Kind == Exec {
		return commandMatch(r.Pattern, c.Subject)
	}
	return pathMatch(r.Pattern, c.Subject)
}

// commandMatch matches a command's text against a pattern in which `*`
// stands for any text; "go test *" also matches "go test" alone.
func commandMatch(pattern, command string) bool {
	command = strings.TrimSpace(command)
	toks := patternTokens(strings.TrimSpace(pattern))
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for i, t := range toks {
		switch {
		case t.wild && i == len(toks)-1 && i > 0 && strings.HasSuffix(toks[i-1].text, " "):
			// "go test *": the space and what follows are optional.
			b.WriteString(`(?: .*)?`)
		case t.wild:
			b.WriteString(`.*`)
		case i+2 == len(toks) && toks[i+1].wild && strings.HasSuffix(t.text, " "):
			b.WriteString(regexp.QuoteMeta(strings.TrimRight(t.text, " ")))
		default:
			b.WriteString(regexp.QuoteMeta(t.text))
		}
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(command)
}

// token is a run of literal text or one wildcard of a pattern.
type token struct {
	text string
	wild bool
}

// patternTokens splits a command pattern at its unescaped `*`s.
func patternTokens(p string) []token {
	var toks []token
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, token{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p) && strings.IndexByte(escapable, p[i+1]) >= 0:
			lit.WriteByte(p[i+1])
			i++
		case c == '*':
			flush()
			toks = append(toks, token{wild: true})
		default:
			lit.WriteByte(c)
		}
	}
	flush()
	return toks
}

// escapable are the characters `\` makes literal in a pattern.
const escapable = `\*?`

// Escape makes s a pattern that matches exactly s: `\`, `*` and `?` get a
// backslash.
func Escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(escapable, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// exact reports whether a pattern has no wildcard, and the text it
// matches then.
func exact(pattern string) (string, bool) {
	var b strings.Builder
	for _, t := range patternTokens(strings.TrimSpace(pattern)) {
		if t.wild {
			return "", false
		}
		b.WriteString(t.text)
	}
	return b.String(), true
}

// pathMatch matches a slash-separated path relative to the workspace:
// `*` is any text within one directory, `?` one character, `**` any
// number of directories (`docs/**` is docs and everything under it).
func pathMatch(pattern, path string) bool {
	re, err := regexp.Compile(globRegexp(strings.TrimPrefix(strings.TrimSpace(pattern), "./")))
	return err == nil && re.MatchString(path)
}

func globRegexp(p string) string {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p) && strings.IndexByte(escapable, p[i+1]) >= 0:
			b.WriteString(regexp.QuoteMeta(string(p[i+1])))
			i++
		case strings.HasPrefix(p[i:], "**/"):
			b.WriteString(`(?:.*/)?`)
			i += 2
		case strings.HasPrefix(p[i:], "/**") && i+3 == len(p):
			b.WriteString(`(?:/.*)?`)
			i += 2
		case strings.HasPrefix(p[i:], "**"):
			b.WriteString(`.*`)
			i++
		case c == '*':
			b.WriteString(`[^/]*`)
		case c == '?':
			b.WriteString(`[^/]`)
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`$`)
	return b.String()
}
