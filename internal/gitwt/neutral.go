package gitwt

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// agentteam's git must never run a program a model wrote. A model can
// write the repository's own config (.git/config, a file it includes, a
// nested repository's) and its attributes (.gitattributes,
// .git/info/attributes), which name the drivers git runs. Two layers keep
// git from running any of it:
//
//   - safety: fixed settings on every command (no hooks, fsmonitor,
//     pager, editor, external diff, signing, submodule recursion, ext::;
//     status and diff pass --ignore-submodules=all: a commit with it as
//     config would refuse a new gitlink);
//   - overrides: before a command that may run a program, the
//     program-running keys the repository itself sets (any scope but the
//     person's global and system config, include files followed) are read
//     by `git config` (which runs nothing) in the very same git directory
//     and work tree, and each is set back to a harmless value, then to the
//     person's own value if they have one. A driver name thus never runs
//     a command the repository chose, whatever the attributes say.

// safety are the settings every command gets.
var safety = []string{
	"--no-pager",
	"-c", "core.hooksPath=" + os.DevNull,
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "core.editor=true",
	"-c", "sequence.editor=true",
	"-c", "diff.external=",
	"-c", "commit.gpgSign=false",
	"-c", "tag.gpgSign=false",
	"-c", "merge.verifySignatures=false",
	"-c", "log.showSignature=false",
	"-c", "submodule.recurse=false",
	"-c", "status.submoduleSummary=false",
	// A lazy fetch (a partial clone's missing object) is a network command too.
	"-c", "protocol.ext.allow=never",
}

// programKeys are the keys whose value git runs as a program (or that let
// it run one), each with the value that runs nothing of the repository's.
// Emptied filters and textconv run nothing; an empty merge driver or diff
// command would fail, so they get git's own text merge and a no-op
// (agentteam's diffs pass --no-ext-diff anyway).
var programKeys = []struct {
	pattern, neutral string
}{
	{`filter\..+\.(clean|smudge|process)`, ""},
	{`filter\..+\.required`, "false"},
	{`diff\..+\.textconv`, ""},
	{`diff\..+\.command`, "true"},
	{`merge\..+\.driver`, "git merge-file --marker-size=%L %A %O %B"},
	{`merge\..+\.recursive`, "text"},
	{`core\.sshcommand`, "ssh"},
	{`core\.askpass`, ""},
	{`core\.alternaterefscommand`, "true"},
	{`credential\..*helper`, ""},
	{`protocol\.ext\.allow`, "never"},
	{`protocol\..*allow`, "user"},
}

var (
	programKeysRegexp = func() string {
		alt := make([]string, len(programKeys))
		for i, k := range programKeys {
			alt[i] = k.pattern
		}
		return "^(" + strings.Join(alt, "|") + ")$"
	}()
	programKeyRes = func() []*regexp.Regexp {
		res := make([]*regexp.Regexp, len(programKeys))
		for i, k := range programKeys {
			res[i] = regexp.MustCompile("^" + k.pattern + "$")
		}
		return res
	}()
)

// neutral is the harmless value of a program-running key.
func neutral(key string) string {
	for i, re := range programKeyRes {
		if re.MatchString(key) {
			return programKeys[i].neutral
		}
	}
	return ""
}

// trustedScope: the person's own config files, which no model writes.
func trustedScope(scope string) bool { return scope == "system" || scope == "global" }

// runsNoProgram: plumbing that reads refs and objects only, so it needs
// no overrides (it still gets safety).
func runsNoProgram(args []string) bool {
	switch args[0] {
	case "config", "rev-parse", "show-ref", "check-ref-format", "symbolic-ref", "merge-base",
		"cat-file", "for-each-ref", "update-ref", "branch":
		return true
	case "worktree", "remote":
		return len(args) > 1 && (args[1] == "list" || args[1] == "get-url")
	}
	return false
}

// overrides are the GIT_CONFIG_COUNT variables that set back every
// program-running key the repository at dir (as pre addresses it) sets.
func overrides(ctx context.Context, dir string, env, pre []string) ([]string, error) {
	argv := append(slices.Clone(pre), "config", "--null", "--show-scope", "--get-regexp", programKeysRegexp)
	out, err := execGit(ctx, dir, env, argv, 6)
	if err != nil {
		if strings.TrimSpace(out) == "" && !strings.Contains(err.Error(), "fatal") {
			return nil, nil // exit 1: no such key
		}
		return nil, err
	}
	type entry struct{ key, value string }
	var untrusted []string
	var trusted []entry
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		scope := fields[i]
		key, value, _ := strings.Cut(fields[i+1], "\n")
		switch {
		case scope == "command":
			// agentteam's own -c settings
		case trustedScope(scope):
			trusted = append(trusted, entry{key, value})
		case !slices.Contains(untrusted, key):
			untrusted = append(untrusted, key)
		}
	}
	set := make([]entry, 0, len(untrusted))
	for _, k := range untrusted {
		set = append(set, entry{k, neutral(k)})
	}
	// The person's values come after every reset: an empty credential
	// helper empties the list, and a single value's last setting wins.
	for _, e := range trusted {
		if slices.Contains(untrusted, e.key) {
			set = append(set, e)
		}
	}
	if len(set) == 0 {
		return nil, nil
	}
	vars := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(set))}
	for i, e := range set {
		n := strconv.Itoa(i)
		vars = append(vars, "GIT_CONFIG_KEY_"+n+"="+e.key, "GIT_CONFIG_VALUE_"+n+"="+e.value)
	}
	return vars, nil
}
