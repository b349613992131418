package gitwt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// A teammate run by a worker on another host has its branch in the
// worker's clone: the worker pushes it to the team's git remote, and the
// lead fetches it from there into its own repository. Both ends name the
// remote as configured in their own repository, never a URL handed over
// by another process; network commands run with the safety settings, no
// ext:: transport, no submodules, and without the model API key's
// variables in their environment.

// Remotes is the network half of a Repo: its configured remotes, push
// and fetch of branches and commits, and refs on a remote.
type Remotes struct{ repo *Repo }

// netSafety are the -c settings of push and fetch, on top of safety.
var netSafety = []string{"-c", "protocol.ext.allow=never", "-c", "submodule.recurse=false", "-c", "push.gpgSign=false"}

// ErrNoRemote is returned for a remote name the repository does not configure.
var ErrNoRemote = errors.New("no such git remote")

// URLs are the repository's remotes and their fetch URLs, by name.
func (rs *Remotes) URLs(ctx context.Context) (map[string]string, error) {
	out, err := rs.repo.top(ctx, nil, "config", "--null", "--get-regexp", `^remote\..*\.url$`)
	if err != nil {
		if strings.TrimSpace(out) == "" && !strings.Contains(err.Error(), "fatal") {
			return map[string]string{}, nil // exit 1: none configured
		}
		return nil, err
	}
	remotes := map[string]string{}
	for _, rec := range strings.Split(out, "\x00") {
		key, url, ok := strings.Cut(rec, "\n")
		if !ok {
			continue
		}
		name := strings.TrimSuffix(strings.TrimPrefix(key, "remote."), ".url")
		if validRemoteName(name) {
			remotes[name] = url
		}
	}
	return remotes, nil
}

// validRemoteName: a name git could take for an option is never used.
func validRemoteName(name string) bool {
	return name != "" && name[0] != '-' && !strings.ContainsAny(name, "\x00\n")
}

// PushURL is the URL a push to the named remote goes to.
func (rs *Remotes) PushURL(ctx context.Context, remote string) (string, error) {
	if !validRemoteName(remote) {
		return "", fmt.Errorf("%w %q", ErrNoRemote, remote)
	}
	remotes, err := rs.URLs(ctx)
	if err != nil {
		return "", err
	}
	if _, ok := remotes[remote]; !ok {
		return "", fmt.Errorf("%w %q", ErrNoRemote, remote)
	}
	out, err := rs.repo.top(ctx, nil, "remote", "get-url", "--push", remote)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(out), nil
}

// Push pushes refs/heads/branch to the same branch on the named remote,
// never forced, and returns the commit pushed. dropEnv names variables
// (the model API key's) the git process must not have.
func (rs *Remotes) Push(ctx context.Context, remote, branch string, dropEnv []string) (string, error) {
	url, err := rs.PushURL(ctx, remote)
	if err != nil {
		return "", err
	}
	commit := rs.repo.BranchCommit(ctx, branch)
	if commit == "" {
		return "", fmt.Errorf("no branch %s to push", branch)
	}
	ref := "refs/heads/" + branch
	_, err = rs.runNet(ctx, dropEnv, url, "push", "--quiet", "--no-verify", "--recurse-submodules=no",
		remote, commit+":"+ref)
	if err != nil {
		return "", errors.New(RedactIn(pushFailure(err.Error()), url))
	}
	return commit, nil
}

// pushFailure is what went wrong with a push, in a clause.
func pushFailure(msg string) string {
	switch {
	case strings.Contains(msg, "non-fast-forward") || strings.Contains(msg, "fetch first") || strings.Contains(msg, "[rejected]"):
		return "the remote's branch has commits this one lacks (not a fast-forward)"
	case strings.Contains(msg, "does not appear to be a git repository") || strings.Contains(msg, "Could not read from remote") ||
		strings.Contains(msg, "unable to access") || strings.Contains(msg, "Could not resolve host"):
		return "the remote could not be reached (" + lastGitLine(msg) + ")"
	}
	return lastGitLine(msg)
}

// lastGitLine is the most telling line of git's message: its first
// fatal: or error: line, without the prefix.
func lastGitLine(msg string) string {
	msg = strings.TrimPrefix(msg, "git push: ")
	msg = strings.TrimPrefix(msg, "git fetch: ")
	for _, l := range strings.Split(msg, "; ") {
		for _, p := range []string{"fatal: ", "error: "} {
			if strings.HasPrefix(l, p) {
				return strings.TrimSpace(strings.TrimPrefix(l, p))
			}
		}
	}
	return strings.TrimSpace(msg)
}

// Fetch fetches branch from the named remote into the remote-tracking
// ref refs/remotes/REMOTE/branch and returns the commit it names.
func (rs *Remotes) Fetch(ctx context.Context, remote, branch string, dropEnv []string) (string, error) {
	remotes, err := rs.URLs(ctx)
	if err != nil {
		return "", err
	}
	url, ok := remotes[remote]
	if !ok || !validRemoteName(remote) {
		return "", fmt.Errorf("%w %q", ErrNoRemote, remote)
	}
	track := "refs/remotes/" + remote + "/" + branch
	if _, err := rs.repo.top(ctx, nil, "check-ref-format", track); err != nil {
		return "", fmt.Errorf("the remote %q and branch %q make no usable ref name", remote, branch)
	}
	_, err = rs.runNet(ctx, dropEnv, "", "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head",
		remote, "+refs/heads/"+branch+":"+track)
	if err != nil {
		return "", errors.New(RedactIn(lastGitLine(err.Error()), url))
	}
	out, err := rs.repo.top(ctx, nil, "rev-parse", "--verify", "--quiet", track+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("the fetch of %s from %s brought no commit", branch, remote)
	}
	return strings.TrimSpace(out), nil
}

// RedactURL is url without the user and password a URL may carry
// (https://user:token@host/x → https://host/x); an scp-like address
// (git@host:x) has no password and is kept.
func RedactURL(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	host, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	if path != "" || strings.Contains(rest, "/") {
		return scheme + "://" + host + "/" + path
	}
	return scheme + "://" + host
}

// RedactIn replaces url in msg with RedactURL(url).
func RedactIn(msg, url string) string {
	if url == "" {
		return msg
	}
	return strings.ReplaceAll(msg, url, RedactURL(url))
}

// SameRepoURL reports whether two remote URLs name the same repository,
// credentials and a trailing ".git" or "/" aside.
func SameRepoURL(a, b string) bool {
	norm := func(u string) string {
		u = strings.TrimSuffix(strings.TrimSuffix(RedactURL(u), "/"), ".git")
		return strings.TrimSuffix(u, "/")
	}
	return a != "" && norm(a) == norm(b)
}

// runNet is run for push and fetch: netSafety on, the person's ssh
// agent and proxies in git's environment, and the variables hide names
// (the model API key's) left out. url is where a push goes.
func (rs *Remotes) runNet(ctx context.Context, hide []string, url string, args ...string) (string, error) {
	// git takes the first remote.NAME.uploadpack (or receivepack) it reads,
	// the repository's own: only the command line wins over it.
	switch args[0] {
	case "fetch":
		args = slices.Insert(args, 1, "--upload-pack=git-upload-pack")
	case "push":
		rp := "git-receive-pack"
		if localURL(url) {
			rp = localReceivePack
		}
		args = slices.Insert(args, 1, "--receive-pack="+rp)
	}
	return runGit(ctx, rs.repo.Top, rs.repo.where(), nil, true, hide, args)
}

// localReceivePack receives a push into a repository on this machine,
// which a model may have made (and pointed the remote's URL at): its hooks
// and a checkout of its own (updateInstead) would run as the person.
const localReceivePack = "git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c receive.denyCurrentBranch=refuse receive-pack"

// localURL reports whether git reaches url on this machine, by path: a
// file:// URL, or no scheme and no host: before the first slash.
func localURL(url string) bool {
	if strings.HasPrefix(url, "file://") {
		return true
	}
	if strings.Contains(url, "://") {
		return false
	}
	colon, slash := strings.Index(url, ":"), strings.Index(url, "/")
	return colon < 0 || slash >= 0 && slash < colon
}

// A teammate on a worker starts from the lead's commit, not from the
// worker's clone, which may be behind: the lead makes sure the team's
// remote has that commit (PushCommit to a ref of agentteam's own when no
// branch it knows of there holds it), the worker fetches it by id
// (FetchCommit). A merged teammate's pushed branch is then deleted from
// the remote (DeleteRef), unless it moved on since.

// Holds reports whether a remote-tracking branch of remote holds
// commit: the remote had it when it was last fetched from.
func (rs *Remotes) Holds(ctx context.Context, remote, commit string) bool {
	if !validRemoteName(remote) || !IsCommitID(commit) {
		return false
	}
	out, err := rs.repo.top(ctx, nil, "for-each-ref", "--count=1", "--format=%(refname)", "--contains", commit, "refs/remotes/"+remote+"/")
	return err == nil && strings.TrimSpace(out) != ""
}

// refPushURL is the URL a push of ref to the named remote goes to, once
// git accepts ref as a ref name.
func (rs *Remotes) refPushURL(ctx context.Context, remote, ref string) (string, error) {
	url, err := rs.PushURL(ctx, remote)
	if err != nil {
		return "", err
	}
	if _, err := rs.repo.top(ctx, nil, "check-ref-format", ref); err != nil {
		return "", fmt.Errorf("%.80q is no usable ref name", ref)
	}
	return url, nil
}

// PushCommit sets ref (a full ref name outside refs/heads and refs/tags,
// agentteam's own) on the named remote to commit, forced: the ref is
// agentteam's, only there to keep the commit on the remote.
func (rs *Remotes) PushCommit(ctx context.Context, remote, commit, ref string, dropEnv []string) error {
	if !IsCommitID(commit) || !strings.HasPrefix(ref, "refs/agentteam/") {
		return fmt.Errorf("push %.80q to %.80q: not a commit id and a ref of agentteam's", commit, ref)
	}
	url, err := rs.refPushURL(ctx, remote, ref)
	if err != nil {
		return err
	}
	_, err = rs.runNet(ctx, dropEnv, url, "push", "--quiet", "--no-verify", "--recurse-submodules=no", remote, "+"+commit+":"+ref)
	if err != nil {
		return errors.New(RedactIn(pushFailure(err.Error()), url))
	}
	return nil
}

// FetchCommit fetches the commit id from the named remote (by id: the
// remote must hold it under some ref), writing no ref here.
func (rs *Remotes) FetchCommit(ctx context.Context, remote, id string, dropEnv []string) error {
	if !IsCommitID(id) {
		return fmt.Errorf("%.80q is no commit id", id)
	}
	remotes, err := rs.URLs(ctx)
	if err != nil {
		return err
	}
	url, ok := remotes[remote]
	if !ok || !validRemoteName(remote) {
		return fmt.Errorf("%w %q", ErrNoRemote, remote)
	}
	_, err = rs.runNet(ctx, dropEnv, "", "fetch", "--quiet", "--no-tags", "--no-recurse-submodules", "--no-write-fetch-head", remote, id)
	if err != nil {
		msg := lastGitLine(err.Error())
		if strings.Contains(msg, "not our ref") {
			msg = "the remote has no such commit"
		}
		return errors.New(RedactIn(msg, url))
	}
	if !rs.repo.HasCommit(ctx, id) {
		return fmt.Errorf("the fetch from %s brought no commit %.12s", remote, id)
	}
	return nil
}

// DeleteRef deletes ref on the named remote if it still names
// expect (a full commit id): one that moved on since is left alone. An
// expect of "" deletes whatever it names, for agentteam's own refs only.
func (rs *Remotes) DeleteRef(ctx context.Context, remote, ref, expect string, dropEnv []string) error {
	own := expect == "" && strings.HasPrefix(ref, "refs/agentteam/")
	if !own && !IsCommitID(expect) || !strings.HasPrefix(ref, "refs/") {
		return fmt.Errorf("delete %.80q at %.80q: not a ref and a commit id", ref, expect)
	}
	url, err := rs.refPushURL(ctx, remote, ref)
	if err != nil {
		return err
	}
	args := []string{"push", "--quiet", "--no-verify", "--recurse-submodules=no"}
	if !own {
		args = append(args, "--force-with-lease="+ref+":"+expect)
	}
	_, err = rs.runNet(ctx, dropEnv, url, append(args, remote, ":"+ref)...)
	if err != nil {
		msg := err.Error()
		if strings.Contains(msg, "stale info") {
			return errors.New("it has moved on since (or is gone)")
		}
		return errors.New(RedactIn(pushFailure(msg), url))
	}
	return nil
}
