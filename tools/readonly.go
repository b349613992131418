package tools

import "strings"

// The allowlist below is plan mode's only guard when commands cannot be
// sandboxed (--sandbox off, or a kernel that refuses): with the sandbox, a
// plan-mode command simply has no write access (see bash.go).

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
		if writes(prog, fields[1:]) {
			return false
		}
	}
	return true
}

// writes reports whether arguments make a listed program write a file or
// run another program.
func writes(prog string, args []string) bool {
	operands := 0
	for _, f := range args {
		if strings.HasPrefix(f, "--output") || ((prog == "sort" || prog == "tree") && strings.HasPrefix(f, "-o")) {
			return true
		}
		switch prog {
		case "find":
			switch f {
			case "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls":
				return true
			}
		case "file":
			// -C compiles a magic file next to the one named.
			if f == "--compile" || (len(f) > 1 && f[0] == '-' && f[1] != '-' && strings.Contains(f, "C")) {
				return true
			}
		case "git":
			// git grep -O runs a program on the files it finds.
			if strings.HasPrefix(f, "--open-files-in-pager") || (len(f) > 1 && f[0] == '-' && f[1] != '-' && strings.Contains(f, "O")) {
				return true
			}
		case "uniq":
			// uniq IN OUT writes OUT.
			if !strings.HasPrefix(f, "-") {
				operands++
			}
		}
	}
	return operands > 1
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
