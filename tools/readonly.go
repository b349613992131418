package tools

import "strings"

// readOnlyPrograms may run in plan mode: they only read. Anything else, and
// any redirection, substitution or background job, counts as a change.
var readOnlyPrograms = map[string]bool{
	"ls": true, "cat": true, "head": true, "tail": true, "wc": true, "grep": true, "rg": true,
	"egrep": true, "fgrep": true, "pwd": true, "echo": true, "tree": true, "file": true, "stat": true,
	"du": true, "df": true, "diff": true, "cmp": true, "sort": true, "uniq": true, "cut": true,
	"tr": true, "nl": true, "less": true, "more": true, "which": true, "whoami": true, "date": true,
	"basename": true, "dirname": true, "realpath": true, "true": true, "false": true, "test": true,
	"md5sum": true, "sha256sum": true, "find": true, "git": true, "go": true,
}

// readOnlySubcommands narrows programs that can also write.
var readOnlySubcommands = map[string]map[string]bool{
	"git": {"status": true, "log": true, "diff": true, "show": true, "ls-files": true,
		"blame": true, "grep": true, "rev-parse": true, "describe": true},
	"go": {"list": true, "version": true, "env": true, "doc": true, "vet": true},
}

// ReadOnlyCommand reports whether a shell command only reads: a pipeline or
// &&/||/; list of known read-only programs, with no redirection, command
// substitution or background job. It errs on the side of refusing.
func ReadOnlyCommand(cmd string) bool {
	if strings.ContainsAny(cmd, "><`$\n\\") {
		return false
	}
	for _, seg := range splitCommands(cmd) {
		fields := strings.Fields(seg)
		if len(fields) == 0 {
			return false
		}
		prog := fields[0]
		if !readOnlyPrograms[prog] {
			return false
		}
		if subs, ok := readOnlySubcommands[prog]; ok && (len(fields) < 2 || !subs[fields[1]]) {
			return false
		}
		for _, f := range fields[1:] {
			if strings.HasPrefix(f, "--output") || ((prog == "sort" || prog == "tree") && strings.HasPrefix(f, "-o")) {
				return false // writes a file
			}
		}
		if prog == "find" {
			for _, f := range fields[1:] {
				switch f {
				case "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf", "-fls":
					return false
				}
			}
		}
	}
	return true
}

// splitCommands cuts a command line at |, ||, && and ; (quotes are not
// parsed, so a separator inside quotes only makes the check stricter).
func splitCommands(cmd string) []string {
	var out []string
	start := 0
	for i := 0; i < len(cmd); i++ {
		switch cmd[i] {
		case '|', ';':
			out = append(out, cmd[start:i])
			if i+1 < len(cmd) && cmd[i+1] == '|' {
				i++
			}
			start = i + 1
		case '&':
			if i+1 < len(cmd) && cmd[i+1] == '&' {
				out = append(out, cmd[start:i])
				i++
				start = i + 1
			} else {
				return []string{""} // a background job: refuse
			}
		}
	}
	return append(out, cmd[start:])
}
