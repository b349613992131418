package permission

import (
	"path"
	"regexp"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// line is a command line as rules see it: the simple commands it runs,
// found by bash's grammar, wherever they sit (pipelines, lists, $(…),
// backquotes, subshells, functions, here-documents, `sh -c '…'`).
type line struct {
	cmds []simple
	// opaque names the first construct whose commands the parser cannot
	// pin down ("eval", "find -exec"); "" when there is none.
	opaque string
	// writes: an output redirection to a file somewhere in the line.
	writes bool
}

// simple is one simple command.
type simple struct {
	// allow are the texts an allow rule may match to let it run: the
	// command with quotes and backslashes removed, and the command a
	// harmless wrapper (nice, nohup, timeout…) runs. Empty when an
	// argument is computed at run time ($X, $(…)): no allow rule fits.
	allow []string
	// deny are the texts a deny or ask rule is matched against: the allow
	// texts, the command without its assignments, its name without a
	// directory (/bin/rm is rm), and what every wrapper runs (sudo, env,
	// xargs, find -exec…).
	deny []string
	// script: a shell that runs a literal script (`sh -c 'go test'`),
	// whose commands are on the line in their own right.
	script bool
}

// maxDepth bounds scripts within scripts (`sh -c "sh -c '…'"`).
const maxDepth = 8

// parseLine reads a bash command line.
func parseLine(cmd string) line {
	var l line
	l.parse(cmd, 0)
	return l
}

func (l *line) see(opaque string) {
	if l.opaque == "" {
		l.opaque = opaque
	}
}

// parse adds the commands of one script.
func (l *line) parse(src string, depth int) {
	if depth > maxDepth {
		l.see("scripts nested too deep")
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		l.see("a command line that does not parse")
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			l.call(src, n, depth)
		case *syntax.DeclClause:
			// export, declare, local, readonly: as written.
			text := strings.TrimSpace(src[n.Pos().Offset():n.End().Offset()])
			l.cmds = append(l.cmds, simple{allow: []string{text}, deny: []string{text}})
		case *syntax.Redirect:
			if writesFile(src, n) {
				l.writes = true
			}
		}
		return true
	})
}

// call adds one simple command and what it runs.
func (l *line) call(src string, c *syntax.CallExpr, depth int) {
	var assigns []string
	pinned := true
	for _, a := range c.Assigns {
		text := strings.TrimSpace(src[a.Pos().Offset():a.End().Offset()])
		assigns = append(assigns, text)
		if a.Value != nil && !readWord(src, a.Value).lit {
			pinned = false
		}
	}
	words := make([]word, len(c.Args))
	for i, w := range c.Args {
		words[i] = readWord(src, w)
	}
	if len(words) == 0 {
		// Only assignments: as written.
		text := strings.Join(assigns, " ")
		s := simple{deny: []string{text}}
		if pinned {
			s.allow = []string{text}
		}
		l.cmds = append(l.cmds, s)
		return
	}
	var s simple
	full := strings.TrimSpace(strings.Join(assigns, " ") + " " + joinWords(words))
	for _, w := range words {
		pinned = pinned && w.lit
	}
	if pinned {
		s.allow = append(s.allow, full)
	}
	s.deny = append(s.deny, full)
	l.run(&s, words, pinned && len(assigns) == 0, depth)
	l.cmds = append(l.cmds, s)
}

// run adds to s what the command words run, looking through wrappers;
// allow says whether what a harmless wrapper runs may still be allowed.
func (l *line) run(s *simple, words []word, allow bool, depth int) {
	for range maxDepth {
		if len(words) == 0 {
			return
		}
		name := words[0]
		if !name.lit || name.glob {
			l.see("a command name the shell computes ($X, $(…), a glob or braces)")
			return
		}
		base := path.Base(name.value)
		s.deny = append(s.deny, joinWords(words))
		if base != name.value {
			s.deny = append(s.deny, strings.TrimSpace(base+" "+joinWords(words[1:])))
		}
		if shells[base] {
			s.script = l.shell(words[1:], depth) && allow && base == name.value
			return
		}
		next, harmless, ok := l.wrapped(base, words[1:], depth)
		if !ok {
			return
		}
		s.deny = append(s.deny, suffixes(words[1:])...)
		allow = allow && harmless && base == name.value
		if allow && len(next) > 0 {
			s.allow = append(s.allow, joinWords(next))
		}
		words = next
	}
	l.see("wrappers nested too deep")
}

// wrapped is the command a wrapper runs: next is its words, harmless says
// it runs them as they are (nice, nohup, timeout), ok that name wraps one.
// The shells, eval and find add what their scripts run to l directly.
func (l *line) wrapped(name string, args []word, depth int) (next []word, harmless, ok bool) {
	switch name {
	case "command":
		rest, opts := options(args, "")
		if strings.ContainsAny(strings.Join(opts, ""), "vV") {
			return nil, false, false // prints what the name is
		}
		return rest, len(opts) == 0 || strings.Join(opts, "") == "-p", true
	case "builtin", "nohup":
		return skipDashDash(args), true, true
	case "exec":
		rest, opts := options(args, "a")
		return rest, len(opts) == 0, true
	case "nice":
		rest, _ := options(args, "n")
		return rest, true, true
	case "time":
		rest, opts := options(args, "fo")
		return rest, len(opts) == 0 || strings.Join(opts, "") == "-p", true
	case "timeout":
		rest, _ := options(args, "sk")
		if len(rest) == 0 {
			return nil, false, false
		}
		return rest[1:], true, true
	case "stdbuf":
		rest, _ := options(args, "ioe")
		return rest, true, true
	case "setsid":
		rest, _ := options(args, "")
		return rest, true, true
	case "ionice":
		rest, _ := options(args, "cnp")
		return rest, true, true
	case "env":
		return l.env(args, depth)
	case "sudo", "doas":
		rest, _ := options(args, "ugCDhpRrTtU")
		return rest, false, true
	case "busybox":
		return args, false, true
	case "xargs":
		rest, _ := options(args, "adEeIiLlnPs")
		if len(rest) > 0 && (!rest[0].lit || rest[0].glob) {
			l.see("xargs with a command the shell computes")
		}
		return rest, false, true
	case "eval", "trap", "alias":
		l.see(name)
		l.literalScript(args, depth)
		return nil, false, false
	case "source", ".":
		l.see("source (a script file)")
		return nil, false, false
	case "find":
		l.find(args, depth)
		return nil, false, false
	}
	return nil, false, false
}

// env runs its command with VAR=x set; -S splits a string into a command.
func (l *line) env(args []word, depth int) ([]word, bool, bool) {
	harmless := true
	for len(args) > 0 {
		a := args[0]
		switch {
		case a.value == "--":
			args = args[1:]
		case strings.HasPrefix(a.value, "-S") || strings.HasPrefix(a.value, "--split-string"):
			l.see("env -S")
			if v := strings.TrimPrefix(strings.TrimPrefix(a.value, "--split-string"), "-S"); strings.TrimPrefix(v, "=") != "" {
				l.parse(strings.TrimPrefix(v, "="), depth+1)
			} else if len(args) > 1 && args[1].lit {
				l.parse(args[1].value, depth+1)
			}
			return nil, false, false
		case a.value == "-u" || a.value == "-C" || a.value == "--unset" || a.value == "--chdir":
			harmless = false
			args = args[min(2, len(args)):]
			continue
		case strings.HasPrefix(a.value, "-") && a.value != "-":
			harmless = false
			args = args[1:]
			continue
		case strings.Contains(a.value, "=") || !a.lit && strings.Contains(a.text, "="):
			harmless = false
			args = args[1:]
			continue
		}
		return args, harmless, true
	}
	return nil, false, false
}

var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// shell reads `sh -c SCRIPT`: a literal script is parsed in turn (parsed
// says so); a computed one, or a shell reading its script from its input,
// is opaque. A script file it runs is not read.
func (l *line) shell(args []word, depth int) (parsed bool) {
	c, ended := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case !a.lit:
			l.see("a shell given words the shell computes")
			return false
		case ended || !strings.HasPrefix(a.value, "-") && !strings.HasPrefix(a.value, "+"):
			if c {
				l.parse(a.value, depth+1)
			}
			return c
		case a.value == "--":
			ended = true
		case a.value == "-o" || a.value == "+o" || a.value == "-O" || a.value == "+O" || a.value == "--rcfile" || a.value == "--init-file":
			i++
		case !strings.HasPrefix(a.value, "--") && strings.Contains(a.value, "c"):
			c = true
		}
	}
	if c {
		l.see("sh -c without a script")
		return false
	}
	l.see("a shell reading its script from its input")
	return false
}

// literalScript parses eval's (trap's, alias's) literal arguments, so a
// deny rule still sees the commands written there.
func (l *line) literalScript(args []word, depth int) {
	var parts []string
	for _, a := range args {
		if !a.lit {
			return
		}
		v := a.value
		if _, val, ok := strings.Cut(v, "="); ok && !strings.HasPrefix(v, "-") {
			v = val // alias name=value
		}
		parts = append(parts, v)
	}
	l.parse(strings.Join(parts, " "), depth+1)
}

// find: -exec and its kin run a command per file, -delete removes them,
// -fprint and its kin write a file.
func (l *line) find(args []word, depth int) {
	for i := 0; i < len(args); i++ {
		switch v := args[i].value; v {
		case "-exec", "-execdir", "-ok", "-okdir":
			l.see("find " + v)
			end := i + 1
			for end < len(args) && args[end].value != ";" && args[end].value != "+" {
				end++
			}
			if end > i+1 {
				s := simple{deny: []string{joinWords(args[i+1 : end])}}
				l.run(&s, args[i+1:end], false, depth+1)
				l.cmds = append(l.cmds, s)
			}
			i = end
		case "-delete":
			l.see("find -delete")
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			l.see("find " + v)
		}
	}
}

// options splits leading options from the words after them; withValue
// are the short options that take the next word as their value.
func options(args []word, withValue string) (rest []word, opts []string) {
	for i := 0; i < len(args); i++ {
		v := args[i].value
		if v == "--" {
			return args[i+1:], opts
		}
		if !strings.HasPrefix(v, "-") || v == "-" || !args[i].lit {
			return args[i:], opts
		}
		opts = append(opts, v)
		if !strings.HasPrefix(v, "--") && len(v) == 2 && strings.IndexByte(withValue, v[1]) >= 0 {
			i++
		}
	}
	return nil, opts
}

// maxSuffixes bounds the words after a wrapper tried as its command.
const maxSuffixes = 16

// suffixes are the words after a wrapper from each place on, each place's
// word without a directory: whatever the wrapper's options, a deny rule
// sees the command it runs (and some that it does not, which only denies
// more).
func suffixes(args []word) []string {
	var out []string
	for i := range min(len(args), maxSuffixes) {
		if !args[i].lit {
			continue
		}
		out = append(out, strings.TrimSpace(path.Base(args[i].value)+" "+joinWords(args[i+1:])))
	}
	return out
}

func skipDashDash(args []word) []word {
	if len(args) > 0 && args[0].value == "--" {
		return args[1:]
	}
	return args
}

// writesFile reports whether r writes to a file (not to /dev/null or
// another descriptor).
func writesFile(src string, r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
	case syntax.DplOut:
		// >&2 is a descriptor; >&file is a file.
		w := readWord(src, r.Word)
		return !w.lit || strings.Trim(w.value, "0123456789-") != ""
	default:
		return false
	}
	w := readWord(src, r.Word)
	return !w.lit || w.value != "/dev/null"
}

// word is one word of a simple command as rules read it.
type word struct {
	// text is what a rule matches: quotes and backslashes removed, put
	// back in single quotes where the value needs them; the source when
	// the shell computes the word.
	text string
	// value is the word after quote removal, when lit.
	value string
	// lit: the word holds no expansion ($X, $(…), $'…', arithmetic).
	lit bool
	// glob: an unquoted *, ?, [ or { the shell may expand.
	glob bool
}

var plain = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_@%+=:,./~^-]+$`) })

func readWord(src string, w *syntax.Word) word {
	out := word{lit: true}
	var v strings.Builder
	bare := len(w.Parts) == 1
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "\\") {
				bare = false
			}
			out.glob = out.glob || globby(unescaped(p.Value))
			v.WriteString(unquote(p.Value, ""))
		case *syntax.SglQuoted:
			bare = false
			out.lit = out.lit && !p.Dollar
			v.WriteString(p.Value)
		case *syntax.DblQuoted:
			bare = false
			out.lit = out.lit && !p.Dollar
			for _, q := range p.Parts {
				if lit, ok := q.(*syntax.Lit); ok {
					v.WriteString(unquote(lit.Value, "$`\"\\\n"))
				} else {
					out.lit = false
				}
			}
		default:
			out.lit = false
		}
	}
	out.value = v.String()
	switch {
	case !out.lit || bare:
		out.text = src[w.Pos().Offset():w.End().Offset()]
	case plain().MatchString(out.value):
		out.text = out.value
	default:
		out.text = "'" + strings.ReplaceAll(out.value, "'", `'\''`) + "'"
	}
	return out
}

// unquote removes backslashes: before any character outside quotes (only
// before those in only inside double quotes); a backslash-newline goes.
func unquote(s, only string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (only == "" || strings.IndexByte(only, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// globby reports whether the shell may expand s as a glob or braces: a
// `*`, a `?`, or a `[` or `{` closed later (a lone `[` is the test command).
func globby(s string) bool {
	if strings.ContainsAny(s, "*?") {
		return true
	}
	for _, p := range []string{"[]", "{}"} {
		if i := strings.IndexByte(s, p[0]); i >= 0 && strings.IndexByte(s[i:], p[1]) > 0 {
			return true
		}
	}
	return false
}

// unescaped is s without the characters a backslash quotes.
func unescaped(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func joinWords(ws []word) string {
	texts := make([]string, len(ws))
	for i, w := range ws {
		texts[i] = w.text
	}
	return strings.Join(texts, " ")
}
