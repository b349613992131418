package gitwt

import (
	"context"
	"fmt"
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
//     and work tree, and each is set back with -c (git's own 2.26 to 2.30
//     would ignore GIT_CONFIG_COUNT) to a harmless value, then to the
//     person's own value if they have one. A driver name thus never runs
//     a command the repository chose, whatever the attributes say; a key
//     -c cannot name (a subsection with "=") stops the command.
//
// A change to the config between the read and the command is not seen:
// a model must not be able to write the repository's config while
// agentteam's git runs (the sandbox keeps .git/config read-only).

// setting is one config key and its value.
type setting struct{ key, value string }

// fixed are the settings every command gets.
var fixed = []setting{
	{"core.hooksPath", os.DevNull},
	{"core.fsmonitor", "false"},
	{"core.pager", "cat"},
	{"core.editor", "true"},
	{"sequence.editor", "true"},
	{"diff.external", ""},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"merge.verifySignatures", "false"},
	{"log.showSignature", "false"},
	{"submodule.recurse", "false"},
	{"status.submoduleSummary", "false"},
	// A lazy fetch (a partial clone's missing object) is a network command too.
	{"protocol.ext.allow", "never"},
}

// safety are fixed as git's first arguments.
var safety = func() []string {
	args := []string{"--no-pager"}
	for _, s := range fixed {
		args = append(args, "-c", s.key+"="+s.value)
	}
	return args
}()

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
	{`gpg\.(openpgp\.)?program`, "gpg"},
	{`gpg\.x509\.program`, "gpgsm"},
	{`gpg\.ssh\.program`, "ssh-keygen"},
	{`gpg\.ssh\.defaultkeycommand`, ""},
	{`core\.sshcommand`, "ssh"},
	{`core\.askpass`, ""},
	{`core\.alternaterefscommand`, "true"},
	{`credential\..*helper`, ""},
	// git keeps the first of these it reads, the repository's: push and
	// fetch name git's own on the command line, but a partial clone's lazy
	// fetch would still run it, so one set by the repository stops git.
	{`remote\..+\.uploadpack`, refuse},
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

// refuse is the neutral value of a key no later setting overrides.
const refuse = "\x00refuse"

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

// overrides are the settings that set back every program-running key
// the repository at dir (as pre addresses it) sets.
func overrides(ctx context.Context, dir string, env, pre []string) ([]setting, error) {
	scoped := true
	argv := append(slices.Clone(pre), "config", "--null", "--show-scope", "--get-regexp", programKeysRegexp)
	out, err := execGit(ctx, dir, env, argv, 6)
	if exitCode(err) == 129 {
		// git before 2.26 cannot tell whose file a value is from: then every
		// value is set back, the person's too.
		scoped = false
		argv = slices.Delete(argv, len(argv)-3, len(argv)-2)
		out, err = execGit(ctx, dir, env, argv, 6)
	}
	switch {
	case exitCode(err) == 1 && out == "":
		return nil, nil // no such key
	case err != nil:
		return nil, err
	}
	// scope NUL key NL value NUL …, or without scopes key NL value NUL …
	records := strings.Split(out, "\x00")
	if !scoped {
		var withScope []string
		for _, r := range records {
			withScope = append(withScope, "unknown", r)
		}
		records = withScope
	}
	var untrusted []string
	var trusted []setting
	for i := 0; i+1 < len(records); i += 2 {
		scope := records[i]
		key, value, _ := strings.Cut(records[i+1], "\n")
		switch {
		case key == "":
		case scope == "command":
			// agentteam's own -c settings
		case trustedScope(scope):
			trusted = append(trusted, setting{key, value})
		case !slices.Contains(untrusted, key):
			untrusted = append(untrusted, key)
		}
	}
	set := make([]setting, 0, len(untrusted))
	for _, k := range untrusted {
		v := neutral(k)
		if v == refuse {
			return nil, fmt.Errorf("the repository's git config sets %.100q, which agentteam cannot switch off: remove it", k)
		}
		set = append(set, setting{k, v})
	}
	// The person's values come after every reset: an empty credential
	// helper empties the list, and a single value's last setting wins.
	for _, e := range trusted {
		if slices.Contains(untrusted, e.key) {
			set = append(set, e)
		}
	}
	return set, nil
}

// configEnv are the GIT_CONFIG_COUNT variables (git 2.31 or later) that
// give git set, keys with "=" in a subsection too.
func configEnv(set []setting) []string {
	if len(set) == 0 {
		return nil
	}
	vars := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(set))}
	for i, e := range set {
		n := strconv.Itoa(i)
		vars = append(vars, "GIT_CONFIG_KEY_"+n+"="+e.key, "GIT_CONFIG_VALUE_"+n+"="+e.value)
	}
	return vars
}

// CommandEnv is what a model's own read-only git command needs in its
// environment to run none of the repository's programs when nothing else
// confines it (plan mode without the sandbox, where an allowlist lets
// git status, diff, log and show run): the fixed settings, submodules
// left alone, and the overrides for the repository found from dir.
func CommandEnv(ctx context.Context, dir string) []string {
	set := append(slices.Clone(fixed), setting{"diff.ignoreSubmodules", "all"})
	if ov, err := overrides(ctx, dir, gitEnv(false, nil), safety); err == nil {
		set = append(set, ov...)
	}
	return append(configEnv(set), "GIT_PAGER=cat", "GIT_NO_LAZY_FETCH=1")
}
