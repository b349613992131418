// Package permission decides whether an agent's tool call may run, must be
// asked about, or is denied: rules (allow / ask / deny per tool and
// argument pattern) over a mode. It is pure: it reads no file and knows
// no agent; the team gives it each call's tool, kind and subject.
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

var toolRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,63}$`) })

// ParseRule reads a rule as written in a config file or a flag.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, rest, hasArgs := strings.Cut(s, "(")
	name = strings.TrimSpace(name)
	if !toolRE().MatchString(name) {
		return Rule{}, fmt.Errorf("rule %q: write a tool name, optionally with a pattern, like \"bash(go test *)\" or \"write_file(docs/**)\"", s)
	}
	if !hasArgs {
		return Rule{Tool: name, Any: true}, nil
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
	if r.Tool != c.Tool {
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
	pattern = strings.TrimSpace(pattern)
	if strings.HasSuffix(pattern, " *") && command == strings.TrimSpace(strings.TrimSuffix(pattern, " *")) {
		return true
	}
	var b strings.Builder
	b.WriteString(`^`)
	for i, part := range strings.Split(pattern, "*") {
		if i > 0 {
			b.WriteString(`.*`)
		}
		b.WriteString(regexp.QuoteMeta(part))
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	return err == nil && re.MatchString(command)
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
	b.WriteString(`^`)
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
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
