package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/internal/sys/gitwt"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// Registry is what the worktrees read and record of the registry.
type Registry interface {
	Read(ctx context.Context) (registry.Config, error)
	Change(ctx context.Context, fn func(*registry.Config) error) error
}

// Events takes what the worktrees say happened.
type Events interface {
	Emit(event.Event)
}

// Isolation says where a teammate works.
const (
	// IsolationNone: in the workspace itself, shared with the lead.
	IsolationNone = "none"
	// IsolationWorktree: in its own git worktree, .agentteam/worktrees/NAME,
	// on the branch agentteam/NAME made from the lead's HEAD.
	IsolationWorktree = "worktree"
)

// BranchPrefix starts every teammate's branch.
const BranchPrefix = "agentteam/"

// gitTimeout bounds one worktree operation (a few git commands).
const gitTimeout = 2 * time.Minute

// CheckIsolation refuses an isolation no teammate can be spawned with.
func CheckIsolation(iso string) error {
	switch iso {
	case "", IsolationNone, IsolationWorktree:
		return nil
	}
	return fmt.Errorf("isolation %q is not one of worktree or none", iso)
}

// Worktrees are the teammates' git worktrees in one workspace. A running
// team uses them to make a teammate's worktree, commit its work when it
// reports and merge it; `agentteam merge` and `diff` use them without one.
// Git operations of one process are serialized: git's own locks would
// refuse a second one at once rather than wait.
type Worktrees struct {
	ws     *workspace.Workspace
	reg    Registry
	events Events

	mu   sync.Mutex
	repo *gitwt.Repo // opened on first use

	// inCycle, when set, tells from memory whether a teammate this process
	// runs is in a work cycle (known is false for one it does not run). The
	// registry lags: a teammate's result reaches the lead before its status
	// turns idle, and a lead woken by that result must be able to merge.
	inCycle func(name string) (busy, known bool)

	// push, on a worker's team, is the git remote (as this clone names it)
	// each teammate's branch is pushed to when it reports, for a lead on
	// another host to fetch; "" pushes nothing. keyEnv names the variable
	// of the model API key, kept out of git's push and fetch.
	push, keyEnv string
	// share, in the lead's process of a team across hosts, is the git
	// remote the lead's commit goes to for a worker to start a teammate
	// from (ShareBase); "" shares nothing.
	share string
	// noRepo, noRepoAt: why ShareBase found no commit to share, and when.
	// A spawn that only carries the base along asks git again at most
	// every noRepoAsk: in a workspace that is no repository every spawn
	// ran git for nothing (14 ms of CPU each, 1,000 in a storebench run).
	noRepo   error
	noRepoAt time.Time
}

// SetInCycle gives w the roster's knowledge of who is in a work cycle.
func (w *Worktrees) SetInCycle(inCycle func(name string) (busy, known bool)) { w.inCycle = inCycle }

// ShareBasesTo makes w, in the lead's process, put the commit a queued
// worktree teammate starts from on the git remote named remote when that
// remote lacks it (ShareBase); keyEnv as for PushTo.
func (w *Worktrees) ShareBasesTo(remote, keyEnv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.share, w.keyEnv = remote, keyEnv
}

// shares reports whether ShareBase has a remote to push to.
func (w *Worktrees) Shares() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.share != ""
}

// noRepoAsk is how long ShareBase takes a workspace found without a
// commit to share for one, for spawns that do not need it.
const noRepoAsk = 5 * time.Second

// baseRef is the ref of the team's remote that holds the commit name's
// worktree starts from, while no branch there holds it.
func baseRef(name string) string { return "refs/agentteam/base/" + name }

// ShareBase is the lead's HEAD commit, for a worker to start name's
// worktree from; with push, when no branch of the team's remote (as last
// fetched) holds it, it is pushed there under baseRef(name). The commit
// is given with an error too when only the push failed: a worker may have it.
func (w *Worktrees) ShareBase(ctx context.Context, name string, push bool) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	if err := inbox.ValidateTeammateName(name); err != nil {
		return "", err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !push && w.noRepo != nil && time.Since(w.noRepoAt) < noRepoAsk {
		return "", w.noRepo
	}
	r, err := w.openRepo(ctx)
	if err != nil {
		w.noRepo, w.noRepoAt = err, time.Now()
		return "", err
	}
	w.noRepo = nil
	head, err := r.Head(ctx)
	if err != nil {
		return "", err
	}
	if !push || w.share == "" || r.Remotes().Holds(ctx, w.share, head) {
		return head, nil
	}
	if err := r.Remotes().PushCommit(ctx, w.share, head, baseRef(name), w.dropEnv()); err != nil {
		return head, fmt.Errorf("the lead's commit %.12s for %s to start from was not pushed to the git remote %s: %w", head, name, w.share, err)
	}
	return head, nil
}

// start is where a teammate's new branch begins.
type Start struct {
	// base is the lead's commit (SpawnRequest.Base), fetched from the
	// team's remote when this clone lacks it; "" is this clone's HEAD.
	Base string
	// fresh: a new spawn, not a resume. A branch left by an earlier
	// teammate of its name that base holds (merged) moves up to base, so
	// the new one does not start from old code.
	Fresh bool
}

// PushTo makes w push each teammate's branch to the git remote named
// remote when it reports and at the end (a worker's team); keyEnv names
// the variable holding the model API key, which git never gets.
func (w *Worktrees) PushTo(remote, keyEnv string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.push, w.keyEnv = remote, keyEnv
}

// dropEnv are the variables git's push and fetch must not have.
func (w *Worktrees) dropEnv() []string {
	if w.keyEnv == "" {
		return []string{"OPENAI_API_KEY"}
	}
	return []string{"OPENAI_API_KEY", w.keyEnv}
}

// NewWorktrees gives the worktrees of ws, recorded in reg; events may be nil.
func New(ws *workspace.Workspace, reg Registry, events Events) *Worktrees {
	return &Worktrees{ws: ws, reg: reg, events: events}
}

// openRepo finds the workspace's repository, with a sentence that says
// what to do when there is none. Callers hold mu.
func (w *Worktrees) openRepo(ctx context.Context) (*gitwt.Repo, error) {
	if w.repo != nil {
		return w.repo, nil
	}
	r, err := gitwt.Open(ctx, w.ws.Root)
	switch {
	case errors.Is(err, gitwt.ErrNoGit):
		return nil, errors.New("isolation worktree needs git, which is not installed (or not on PATH): install git, or spawn with isolation none")
	case errors.Is(err, gitwt.ErrNotRepo):
		return nil, errors.New("isolation worktree needs a git repository: run git init, or spawn with isolation none")
	case err != nil:
		return nil, fmt.Errorf("isolation worktree: %w", err)
	}
	if _, err := r.Head(ctx); err != nil {
		return nil, errors.New("isolation worktree needs a commit to start from, and the repository has none yet: commit first, or spawn with isolation none")
	}
	w.repo = r
	return r, nil
}

// Check says whether teammates can get worktrees here (for --isolation worktree at start).
func (w *Worktrees) Check(ctx context.Context) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.openRepo(ctx)
	return err
}

// Placed is a teammate's worktree, found or made.
type Placed struct {
	WT *gitwt.Worktree
	// root is the teammate's working directory: the worktree, or the
	// workspace's place in it when the workspace is a repository's subdirectory.
	Root string
	Rel  string // the worktree, relative to the workspace
}

// ensure finds name's worktree, or makes it: on the branch that exists
// already (its unmerged work), else on a new branch from the lead's HEAD
// (from.Base, or this clone's HEAD; note then says why not from.Base).
// The first one also keeps .agentteam/ out of git (info/exclude), so the
// lead's `git status` stays clean and no state is ever committed or merged.
func (w *Worktrees) Ensure(ctx context.Context, name string, from Start) (Placed, bool, string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, err := w.openRepo(ctx)
	if err != nil {
		return Placed{}, false, "", err
	}
	if err := inbox.ValidateTeammateName(name); err != nil {
		return Placed{}, false, "", err
	}
	path := w.ws.WorktreePath(name)
	branch := BranchPrefix + name
	made, note := false, ""
	if from.Base != "" && !r.HasCommit(ctx, from.Base) {
		if err := w.fetchBase(ctx, r, from.Base); err != nil {
			note, from.Base = err.Error(), ""
		}
	}
	wt, ferr := r.Find(ctx, path)
	if ferr == nil && from.Fresh && from.Base != "" {
		// An earlier teammate's worktree of this name, merged: it goes on
		// from the lead's commit (a worktree with work of its own stays).
		if tip := r.BranchCommit(ctx, wt.Branch); wt.Branch == branch && tip != from.Base && r.IsAncestor(ctx, tip, from.Base) {
			_ = wt.FastForward(ctx, from.Base)
		}
	}
	if ferr != nil {
		if _, err := os.Lstat(path); err == nil {
			return Placed{}, false, "", fmt.Errorf("%s exists but git knows no worktree there: move it away", path)
		}
		if err := w.ws.MakeWorktreesDir(); err != nil {
			return Placed{}, false, "", err
		}
		if err := r.Exclude(workspace.StateDir + "/"); err != nil {
			return Placed{}, false, "", err
		}
		if m, err := w.member(ctx, name); err == nil && m.PushedCommit != "" && !r.BranchExists(ctx, m.Branch) {
			// Respawned here after its worker on another host stopped: its
			// branch goes on from the commit pushed there, so its work is
			// kept and its next push is a fast-forward. Without it (the
			// remote out of reach), it starts from HEAD and its push says why.
			if err := w.fetchPushed(ctx, r, m); err != nil {
				if w.events != nil {
					w.events.Emit(event.Event{Agent: name, Payload: event.Failure{Class: event.ClassInternal, Text: "its worktree starts from HEAD: " + err.Error()}})
				}
			}
		}
		if tip := r.BranchCommit(ctx, branch); from.Fresh && from.Base != "" && tip != "" && r.IsAncestor(ctx, tip, from.Base) {
			// An earlier teammate's branch of this name, merged: the new one
			// starts from the lead's commit, not from that old code.
			if err := r.SetBranch(ctx, branch, from.Base, tip); err != nil {
				return Placed{}, false, "", fmt.Errorf("move %s's merged branch to the lead's commit: %w", name, err)
			}
		}
		if wt, err = r.AddFrom(ctx, path, branch, from.Base); err != nil {
			return Placed{}, false, "", fmt.Errorf("make the worktree for %s: %w", name, err)
		}
		made = true
	}
	if wt.Branch != branch {
		return Placed{}, false, "", fmt.Errorf("the worktree %s is on %q, not on %s: move it away", path, wt.Branch, branch)
	}
	root := wt.Path
	if sub, err := filepath.Rel(r.Top, w.ws.Root); err == nil && sub != "." && !strings.HasPrefix(sub, "..") {
		root = filepath.Join(wt.Path, sub)
	}
	rel, _ := filepath.Rel(w.ws.Root, wt.Path)
	return Placed{WT: wt, Root: root, Rel: rel}, made, note, nil
}

// fetchBase brings the lead's commit base into this clone from the
// team's git remote (w.push); its error is the sentence that says why the
// teammate does not start from the lead's commit. Callers hold mu.
func (w *Worktrees) fetchBase(ctx context.Context, r *gitwt.Repo, base string) error {
	why := fmt.Sprintf("its worktree does not start from the lead's commit %.12s but from this worker's clone, which may be behind", base)
	if w.push == "" {
		return fmt.Errorf("%s: this worker has no git remote to fetch it from (--git-remote \"\")", why)
	}
	if err := r.Remotes().FetchCommit(ctx, w.push, base, w.dropEnv()); err != nil {
		return fmt.Errorf("%s: the fetch from the git remote %s failed (%v)", why, w.push, err)
	}
	return nil
}

// find is name's worktree as git knows it, or nil when it was removed.
// Callers hold mu.
func (w *Worktrees) find(ctx context.Context, r *gitwt.Repo, m registry.Member) *gitwt.Worktree {
	if m.Worktree == "" {
		return nil
	}
	wt, err := r.Find(ctx, w.ws.WorktreePath(m.Name))
	if err != nil || wt.Branch != m.Branch {
		return nil
	}
	return wt
}

// member is name's registry entry with a branch, or a sentence saying why not.
func (w *Worktrees) member(ctx context.Context, name string) (registry.Member, error) {
	if err := inbox.ValidateTeammateName(name); err != nil {
		return registry.Member{}, err
	}
	c, err := w.reg.Read(ctx)
	if err != nil {
		return registry.Member{}, err
	}
	i := c.Find(name)
	if i < 0 {
		return registry.Member{}, fmt.Errorf("no teammate named %s", name)
	}
	m := c.Teammates[i]
	if m.Branch == "" {
		return registry.Member{}, fmt.Errorf("%s works in the shared workspace (isolation none): it has no branch to merge or show", name)
	}
	if !ownBranch(m) {
		return registry.Member{}, fmt.Errorf("the registry names %q as %s's branch, not %s%s: agentteam touches no other branch", m.Branch, name, BranchPrefix, name)
	}
	return m, nil
}

// ownBranch: the registry's branch for m is the one agentteam made for it.
// The registry is a file anyone can edit; a branch it names otherwise
// (main, a person's own) is never merged from, committed on or deleted.
func ownBranch(m registry.Member) bool {
	return m.Branch == BranchPrefix+m.Name && inbox.ValidateTeammateName(m.Name) == nil
}

// Report commits the teammate's uncommitted work on its branch and says
// what the branch changes, for its result message: the branch, a
// diffstat against the lead's branch, and how to merge it.
func (w *Worktrees) Report(ctx context.Context, name string) string {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	m, err := w.member(ctx, name)
	if err != nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, err := w.openRepo(ctx)
	if err != nil {
		return fmt.Sprintf("Branch %s: %v", m.Branch, err)
	}
	note := ""
	if wt := w.find(ctx, r, m); wt != nil {
		switch ok, err := wt.CommitAll(ctx, commitMessage(name)); {
		case err != nil:
			note = fmt.Sprintf("\nIts uncommitted work was not committed: %v.", err)
		case ok:
			w.emit(name, event.WorktreeChanged{Action: event.WorktreeCommitted, Branch: m.Branch, Path: m.Worktree})
		}
	}
	into := r.CurrentBranch(ctx)
	sum, files, err := r.BranchStat(ctx, m.Branch)
	if err != nil {
		return fmt.Sprintf("Branch %s: %v%s", m.Branch, err, note)
	}
	w.Record(ctx, name, func(mb *registry.Member) { mb.Diffstat, mb.Merged = sum, sum == "" && r.IsMerged(ctx, m.Branch) })
	if w.push != "" {
		note += w.pushBranch(ctx, r, m)
	}
	if m.BaseNote != "" {
		note += "\nNote: " + m.BaseNote + "."
	}
	if sum == "" {
		return fmt.Sprintf("Branch %s (worktree %s): no changes against %s.%s", m.Branch, m.Worktree, into, note)
	}
	return fmt.Sprintf("Branch %s (worktree %s): %s against %s\n%s\nMerge it into %s with merge_teammate(name=%q).%s",
		m.Branch, m.Worktree, sum, into, files, into, name, note)
}

// commitMessage is the message of the commit agentteam makes of a
// teammate's uncommitted work when it reports or is merged.
func commitMessage(name string) string {
	return fmt.Sprintf("agentteam: work of teammate %s\n\nCommitted by agentteam on %s%s when %s reported (git add -A).", name, BranchPrefix, name, name)
}

// MergeReport is what a merge of a teammate's branch did.
type MergeReport struct {
	Name, Branch, Into string
	// Stat is the merge's diffstat; UpToDate: nothing to merge.
	Stat     string
	UpToDate bool
	// Conflicts are the files that conflicted: the merge was aborted, the
	// lead's tree is as before, and the teammate was asked to resolve them.
	Conflicts []string
	// NotifyErr says why the teammate could not be told of the conflict.
	NotifyErr error
	// Marked: the lead's branch was merged into the teammate's worktree,
	// its conflicts left marked in the files for the teammate to resolve
	// (MarkedNone: that merge went through without a conflict there).
	Marked, MarkedNone bool
	// Remote says what became of the branch a worker pushed to the team's
	// git remote once merged: deleted, or why not ("" for none pushed).
	Remote string
}

// Text is the report as the lead's model (and `agentteam merge`) reads it.
func (r MergeReport) Text() string {
	switch {
	case len(r.Conflicts) > 0:
		told := fmt.Sprintf("%s was asked to merge %s into its branch and resolve them; merge again when it reports.", r.Name, r.Into)
		if r.NotifyErr != nil {
			told = fmt.Sprintf("%s could not be told: %v.", r.Name, r.NotifyErr)
		}
		return fmt.Sprintf("Merging %s into %s conflicts in %s. The merge was aborted and %s is as it was. %s",
			r.Branch, r.Into, strings.Join(r.Conflicts, ", "), r.Into, told)
	case r.UpToDate:
		return fmt.Sprintf("%s has nothing that %s lacks: already merged.", r.Branch, r.Into) + r.remoteText()
	}
	return fmt.Sprintf("Merged %s into %s: %s.", r.Branch, r.Into, orNoChange(r.Stat)) + r.remoteText()
}

func (r MergeReport) remoteText() string {
	if r.Remote == "" {
		return ""
	}
	return " " + r.Remote
}

func orNoChange(stat string) string {
	if stat == "" {
		return "no file changes"
	}
	return stat
}

// conflictText asks a teammate to resolve a merge conflict on its branch.
func conflictText(r MergeReport) string {
	switch {
	case r.Marked:
		return fmt.Sprintf("Merging your branch %s into %s conflicts in: %s. The merge was aborted, and %s was merged into your "+
			"working directory instead: each conflicted file holds both sides between <<<<<<< and >>>>>>> lines. Edit them so they "+
			"hold both changes, with no conflict lines left, then report; your work is committed when you report and the lead merges again.",
			r.Branch, r.Into, strings.Join(r.Conflicts, ", "), r.Into)
	case r.MarkedNone:
		return fmt.Sprintf("Merging your branch %s into %s conflicts in: %s. The merge was aborted, and %s was merged into your "+
			"branch instead, without a conflict there. Check the result and report; the lead merges again.",
			r.Branch, r.Into, strings.Join(r.Conflicts, ", "), r.Into)
	}
	return fmt.Sprintf("Merging your branch %s into %s conflicts in: %s. The merge was aborted. Resolve it on your branch: "+
		"run `git merge %s` in your working directory, fix the conflicted files so they hold both changes (no conflict markers), "+
		"then `git add -A && git commit --no-edit`, and report when done; the lead will merge again.",
		r.Branch, r.Into, strings.Join(r.Conflicts, ", "), r.Into)
}

// Merge merges name's branch into the lead's branch with a merge commit,
// after committing the teammate's uncommitted work. The lead's tree must
// have no uncommitted changes to tracked files, so a conflict can be
// aborted cleanly; a conflict is reported and sent to the teammate with
// notify. A refusal (working teammate, no branch, dirty tree) is an error.
func (w *Worktrees) Merge(ctx context.Context, name string, notify func(text string) error) (MergeReport, error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	m, err := w.member(ctx, name)
	if err != nil {
		return MergeReport{}, err
	}
	busy := m.Status == registry.StatusWorking || m.Status == registry.StatusQueued
	if w.inCycle != nil {
		if b, known := w.inCycle(name); known {
			busy = b
		}
	}
	if busy && !w.pushedElsewhere(m) {
		return MergeReport{}, fmt.Errorf("%s is %s: merge its branch once it has reported its result", name, m.Status)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, err := w.openRepo(ctx)
	if err != nil {
		return MergeReport{}, err
	}
	rep := MergeReport{Name: name, Branch: m.Branch, Into: r.CurrentBranch(ctx)}
	if err := w.fetchPushed(ctx, r, m); err != nil {
		return rep, err
	}
	if !r.BranchExists(ctx, m.Branch) {
		if err := w.notPushed(m); err != nil {
			return rep, err
		}
		return rep, fmt.Errorf("the branch %s no longer exists", m.Branch)
	}
	dirty, err := r.Dirty(ctx)
	if err != nil {
		return rep, err
	}
	if len(dirty) > 0 {
		return rep, fmt.Errorf("%s has uncommitted changes in %s: commit them first, so that a conflicting merge can be aborted without touching them",
			rep.Into, strings.Join(firstN(dirty, 5), ", "))
	}
	if wt := w.find(ctx, r, m); wt != nil {
		if _, err := wt.CommitAll(ctx, commitMessage(name)); err != nil {
			return rep, fmt.Errorf("%s's uncommitted work could not be committed: %w", name, err)
		}
	}
	res, err := r.Merge(ctx, m.Branch, fmt.Sprintf("agentteam: merge teammate %s (%s)", name, m.Branch))
	if err != nil {
		return rep, fmt.Errorf("merge %s into %s: %w", m.Branch, rep.Into, err)
	}
	rep.Stat, rep.UpToDate, rep.Conflicts = res.Stat, res.UpToDate, res.Conflicts
	if len(res.Conflicts) > 0 {
		if wt := w.find(ctx, r, m); wt != nil {
			// The teammate resolves by editing files: the lead's branch is
			// merged into its worktree, the conflicts marked there.
			msg := fmt.Sprintf("agentteam: merge %s into %s to resolve a conflict", rep.Into, m.Branch)
			marked, err := wt.MergeInto(ctx, rep.Into, msg)
			rep.Marked, rep.MarkedNone = err == nil && len(marked) > 0, err == nil && len(marked) == 0
		}
		if notify != nil {
			rep.NotifyErr = notify(conflictText(rep))
		}
		w.emit(name, event.WorktreeChanged{Action: event.WorktreeConflicted, Branch: m.Branch, Into: rep.Into, Conflicts: res.Conflicts})
		return rep, nil
	}
	w.Record(ctx, name, func(mb *registry.Member) { mb.Merged, mb.Diffstat = true, "" })
	if !res.UpToDate {
		w.emit(name, event.WorktreeChanged{Action: event.WorktreeMerged, Branch: m.Branch, Into: rep.Into, Stat: res.Stat})
	}
	rep.Remote = w.dropPushed(ctx, r, m)
	return rep, nil
}

// dropPushed deletes m's branch, which a worker pushed, from the team's
// git remote once the lead's branch holds it, with the ref that held the
// commit it started from: a later teammate of its name neither starts
// from nor pushes onto that old work. A branch that moved on since is
// left. Best effort: it returns a sentence for the merge's report.
// Callers hold mu.
func (w *Worktrees) dropPushed(ctx context.Context, r *gitwt.Repo, m registry.Member) string {
	if !w.pushedElsewhere(m) || !gitwt.IsCommitID(m.PushedCommit) || !r.IsAncestor(ctx, m.PushedCommit, "HEAD") {
		return ""
	}
	remote, err := w.remoteFor(ctx, r, m)
	if err != nil {
		return fmt.Sprintf("Its branch on the team's git remote was not deleted: %v.", err)
	}
	_ = r.Remotes().DeleteRef(ctx, remote, baseRef(m.Name), "", w.dropEnv()) // often none: the lead's commit was on a branch there
	if err := r.Remotes().DeleteRef(ctx, remote, "refs/heads/"+m.Branch, m.PushedCommit, w.dropEnv()); err != nil {
		w.emit(m.Name, event.WorktreeChanged{Action: event.WorktreeKept, Branch: m.Branch, Reason: fmt.Sprintf("it was not deleted from the git remote %s: %v", remote, err)})
		return fmt.Sprintf("%s was not deleted from the git remote %s: %v.", m.Branch, remote, err)
	}
	return fmt.Sprintf("%s was deleted from the git remote %s.", m.Branch, remote)
}

// Diff is name's change against the merge base of its branch and the
// lead's branch (committed work), and the files it has changed since its
// last commit, which the diff does not show yet.
func (w *Worktrees) Diff(ctx context.Context, name string, stat bool) (diff string, uncommitted []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	m, err := w.member(ctx, name)
	if err != nil {
		return "", nil, err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, err := w.openRepo(ctx)
	if err != nil {
		return "", nil, err
	}
	if err := w.fetchPushed(ctx, r, m); err != nil {
		return "", nil, err
	}
	if !r.BranchExists(ctx, m.Branch) {
		if err := w.notPushed(m); err != nil {
			return "", nil, err
		}
		return "", nil, fmt.Errorf("the branch %s no longer exists (merged and removed)", m.Branch)
	}
	if wt := w.find(ctx, r, m); wt != nil {
		uncommitted, _ = wt.Changes(ctx)
	}
	diff, err = r.BranchDiff(ctx, m.Branch, stat)
	return diff, uncommitted, err
}

// Cleanup is the end of a team's run: each teammate's worktree whose
// branch the lead's branch holds is removed with its branch; one with
// unmerged work or uncommitted changes is kept, and listed as an event.
func (w *Worktrees) Cleanup(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	c, err := w.reg.Read(ctx)
	if err != nil {
		return
	}
	var mine []registry.Member
	for _, m := range c.Teammates {
		if m.Isolation == IsolationWorktree && ownBranch(m) {
			mine = append(mine, m)
		}
	}
	if len(mine) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, err := w.openRepo(ctx)
	if err != nil {
		return
	}
	for _, m := range mine {
		wt := w.find(ctx, r, m)
		if !r.BranchExists(ctx, m.Branch) {
			continue
		}
		if w.push != "" {
			// A worker's commits not pushed yet (a teammate stopped before
			// it reported) go to the team's remote; a failure is an event.
			w.pushBranch(ctx, r, m)
		}
		if !r.IsMerged(ctx, m.Branch) {
			w.Record(ctx, m.Name, func(mb *registry.Member) { mb.Merged = false })
			w.emit(m.Name, event.WorktreeChanged{Action: event.WorktreeKept, Branch: m.Branch, Path: m.Worktree, Stat: m.Diffstat,
				Reason: "merge it with agentteam merge " + m.Name})
			continue
		}
		if wt != nil {
			if ch, err := wt.Changes(ctx); err != nil || len(ch) > 0 {
				w.emit(m.Name, event.WorktreeChanged{Action: event.WorktreeKept, Branch: m.Branch, Path: m.Worktree,
					Reason: "it has uncommitted changes in " + strings.Join(firstN(ch, 5), ", ")})
				continue
			}
			if err := r.Remove(ctx, wt, false); err != nil {
				w.emit(m.Name, event.WorktreeChanged{Action: event.WorktreeKept, Branch: m.Branch, Path: m.Worktree, Reason: err.Error()})
				continue
			}
		}
		if err := r.DeleteBranch(ctx, m.Branch); err != nil {
			w.emit(m.Name, event.WorktreeChanged{Action: event.WorktreeKept, Branch: m.Branch, Reason: err.Error()})
			continue
		}
		w.Record(ctx, m.Name, func(mb *registry.Member) { mb.Worktree, mb.Merged, mb.Diffstat = "", true, "" })
		w.emit(m.Name, event.WorktreeChanged{Action: event.WorktreeRemoved, Branch: m.Branch, Path: m.Worktree})
	}
}

// record changes name's registry entry; a failure only costs the record.
func (w *Worktrees) Record(ctx context.Context, name string, fn func(*registry.Member)) {
	_ = w.reg.Change(ctx, func(c *registry.Config) error {
		i := c.Find(name)
		if i < 0 {
			return statefile.ErrNoChange
		}
		fn(&c.Teammates[i])
		return nil
	})
}

func (w *Worktrees) emit(name string, p event.WorktreeChanged) {
	if w.events != nil {
		w.events.Emit(event.Event{Agent: name, Payload: p})
	}
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("and %d more", len(s)-n))
	}
	return s
}

// pushBranch pushes m's branch to the team's git remote (w.push) unless
// the registry says that commit is pushed already, and records where it
// is. It returns a sentence for the teammate's result: where the branch
// went, or why it did not. Callers hold mu.
func (w *Worktrees) pushBranch(ctx context.Context, r *gitwt.Repo, m registry.Member) string {
	commit := r.BranchCommit(ctx, m.Branch)
	if commit == "" || commit == m.PushedCommit || gitwt.IsCommitID(m.PushedCommit) && r.IsAncestor(ctx, commit, m.PushedCommit) {
		return "" // pushed already, here or by a worker that went on from it
	}
	url, err := r.Remotes().PushURL(ctx, w.push)
	if err != nil {
		if errors.Is(err, gitwt.ErrNoRemote) {
			return fmt.Sprintf("\nIts branch was not pushed: this worker's clone has no git remote %q (start the worker with --git-remote NAME), so a lead on another host cannot merge it.", w.push)
		}
		return fmt.Sprintf("\nIts branch was not pushed to the team's git remote %s: %v.", w.push, err)
	}
	shown := gitwt.RedactURL(url)
	if _, err := r.Remotes().Push(ctx, w.push, m.Branch, w.dropEnv()); err != nil {
		w.emit(m.Name, event.WorktreeChanged{Action: event.WorktreeKept, Branch: m.Branch, Path: m.Worktree,
			Reason: fmt.Sprintf("the push to %s (%s) failed: %v", w.push, shown, err)})
		return fmt.Sprintf("\nIts branch was not pushed to the team's git remote %s (%s): %v; the lead cannot merge it until it is.", w.push, shown, err)
	}
	w.Record(ctx, m.Name, func(mb *registry.Member) { mb.PushRemote, mb.PushURL, mb.PushedCommit = w.push, shown, commit })
	return fmt.Sprintf("\nPushed to the team's git remote %s (%s) at %.12s: the lead's merge fetches it from there.", w.push, shown, commit)
}

// notPushed says why the branch of m, which this repository lacks, is
// not here: it ran on a worker of another process that recorded no push
// (nil when that is not the case).
func (w *Worktrees) notPushed(m registry.Member) error {
	if m.Worker == "" || m.PushedCommit != "" || m.Merged {
		return nil
	}
	if w.inCycle != nil {
		if _, known := w.inCycle(m.Name); known {
			return nil
		}
	}
	return fmt.Errorf("the branch %s is not in this repository: %s ran on the worker %s (host %s), and no push of it is recorded (its result says why)",
		m.Branch, m.Name, m.Worker, m.Host)
}

// pushedElsewhere reports whether m's branch is one a worker of another
// process pushed: the lead merges the commit pushed, whatever the
// teammate does now, so its status need not be idle (the registry lags
// the result).
func (w *Worktrees) pushedElsewhere(m registry.Member) bool {
	if m.PushedCommit == "" {
		return false
	}
	if w.inCycle != nil {
		if _, known := w.inCycle(m.Name); known {
			return false
		}
	}
	return true
}

// fetchPushed brings into this repository the branch a worker on another
// host pushed for m (the registry's PushedCommit), so the lead's merge and
// diff find it as a local branch. The registry is a document any process
// of the team can write: its commit id is checked, its remote is only
// looked up among this repository's own remotes (by URL, else by name)
// and never handed to git, and its branch is agentteam/NAME (member).
// The local branch moves only forward, or from a commit already merged.
// Callers hold mu.
func (w *Worktrees) fetchPushed(ctx context.Context, r *gitwt.Repo, m registry.Member) error {
	if m.PushedCommit == "" {
		return nil
	}
	if !gitwt.IsCommitID(m.PushedCommit) {
		return fmt.Errorf("the registry names %.80q as the commit %s's branch was pushed at, which is no commit id: nothing was fetched", m.PushedCommit, m.Name)
	}
	local := r.BranchCommit(ctx, m.Branch)
	if local == m.PushedCommit || local != "" && r.IsAncestor(ctx, m.PushedCommit, local) {
		return nil // this clone is the worker's, fetched it before, or went on from it
	}
	remote, err := w.remoteFor(ctx, r, m)
	if err != nil {
		return err
	}
	tip, err := r.Remotes().Fetch(ctx, remote, m.Branch, w.dropEnv())
	if err != nil {
		return fmt.Errorf("could not fetch %s's branch %s from the git remote %s: %w", m.Name, m.Branch, remote, err)
	}
	if !r.IsAncestor(ctx, m.PushedCommit, tip) {
		return fmt.Errorf("the git remote %s's branch %s does not hold the commit %.12s that %s's worker pushed: was it pushed over?", remote, m.Branch, m.PushedCommit, m.Name)
	}
	if local != "" && !r.IsAncestor(ctx, local, m.PushedCommit) && !r.IsAncestor(ctx, local, "HEAD") {
		return fmt.Errorf("this repository's own branch %s has commits that the one %s's worker pushed lacks: rename it (git branch -m %s OTHER) and try again", m.Branch, m.Name, m.Branch)
	}
	if local != "" {
		if _, err := r.Find(ctx, w.ws.WorktreePath(m.Name)); err == nil {
			return fmt.Errorf("this repository has a worktree of %s on %s, which the pushed branch would move under it: remove it (git worktree remove %s) and try again", m.Name, m.Branch, w.ws.WorktreePath(m.Name))
		}
	}
	// As when a worktree is made here: agentteam's state stays out of git.
	if err := r.Exclude(workspace.StateDir + "/"); err != nil {
		return err
	}
	if err := r.SetBranch(ctx, m.Branch, m.PushedCommit, local); err != nil {
		return fmt.Errorf("could not set %s to the commit %s's worker pushed: %w", m.Branch, m.Name, err)
	}
	return nil
}

// remoteFor is the remote of this repository that m's branch was pushed
// to: the one whose URL is the registry's, else the one of its name.
func (w *Worktrees) remoteFor(ctx context.Context, r *gitwt.Repo, m registry.Member) (string, error) {
	remotes, err := r.Remotes().URLs(ctx)
	if err != nil {
		return "", err
	}
	var byURL []string
	for name, url := range remotes {
		if gitwt.SameRepoURL(url, m.PushURL) {
			byURL = append(byURL, name)
		}
	}
	if len(byURL) > 0 {
		slices.Sort(byURL)
		return byURL[0], nil
	}
	if _, ok := remotes[m.PushRemote]; ok && m.PushRemote != "" {
		return m.PushRemote, nil
	}
	return "", fmt.Errorf("%s's branch %s was pushed to the git remote %.80q (%.200q), which this repository has none of: add it (git remote add NAME URL) and try again",
		m.Name, m.Branch, m.PushRemote, m.PushURL)
}
