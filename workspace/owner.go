package workspace

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// Whose .agentteam/ is this? A cloned or unpacked repository can carry one
// (git keeps no extended attributes, so its inbox logs have no read
// position and every planted line would reach the lead as a message), so
// state is read only where this user's agentteam made it:
//   - making .agentteam/, agentteam writes a random id in .agentteam/id and
//     in a record of this user's, $XDG_STATE_HOME/agentteam/workspaces/
//     (else ~/.local/state/…), named by the workspace's real path, mode 0600;
//   - a .agentteam/ whose id matches the record is this user's; one that
//     holds no state (no file in inbox/, team/, sessions/, tasks/, no
//     events.jsonl) is claimed as it is opened; a state directory of an
//     earlier agentteam (no id) is adopted when this user owns every file
//     in it and an inbox log carries the read position agentteam keeps in
//     an extended attribute, which no clone can carry;
//   - anything else is foreign: refused with ForeignError, until the person
//     adopts it (Adopt, `agentteam adopt`) or moves it aside.
//
// Not covered: a copy that keeps extended attributes (cp -a, rsync -X,
// tar --xattrs) of an earlier agentteam's state, and files a later
// `git pull` brings into a .agentteam/ the repository tracks.

// idFile is the workspace's id, next to the state it vouches for.
const idFile = "id"

// ignoreFile keeps the state out of git: agentteam writes it with "*".
const ignoreFile = ".gitignore"

// readPosAttr is the inbox log's read position (see inbox.posAttr).
const readPosAttr = "user.agentteam.read"

// ForeignError is a .agentteam/ this user's agentteam did not make here.
type ForeignError struct {
	Dir string
	// Found are some of its state files, relative to Dir.
	Found []string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("%s holds agentteam state this user's agentteam did not make here (%s), as a cloned or copied repository could plant it, so none of it is read: run `agentteam adopt` to see it and trust it, or move it aside (mv %s %s.foreign) to start fresh",
		e.Dir, strings.Join(e.Found, ", "), e.Dir, e.Dir)
}

// ownership is what owner.check found.
type ownership int

const (
	ownNothing ownership = iota // no .agentteam/, or one without state: to claim
	ownMine                     // the id matches this user's record
	ownEarlier                  // an earlier agentteam's, adopted
	ownForeign
)

// Adopt makes a foreign .agentteam/ this user's, once the person has seen
// what it holds (ForeignState) and trusts it.
func (w *Workspace) Adopt() error {
	if err := w.layout().checkLinks(); err != nil {
		return err
	}
	return w.owner().adopt()
}

// ForeignState is every state file of a foreign .agentteam/ (relative to
// it), nil when it is this user's.
func (w *Workspace) ForeignState() ([]string, error) { return w.owner().foreign() }

// owner is the ownership record of a workspace's .agentteam/: the id
// beside the state, this user's record of it, and the test of state that
// carries neither. It is built from the workspace's paths as it is needed.
type owner struct {
	root    string   // the workspace's real path, which names the record
	dir     string   // .agentteam/
	inbox   string   // inbox/, whose logs carry the read position
	guarded []string // the directories whose files reach a model, and the event log
}

// owner is the ownership record of w's .agentteam/.
func (w *Workspace) owner() owner {
	return owner{
		root:    w.Root,
		dir:     w.StatePath(),
		inbox:   w.InboxDir(),
		guarded: []string{w.InboxDir(), w.TeamDir(), w.SessionsDir(), w.TasksDir(), w.EventsPath()},
	}
}

// check tells whose .agentteam/ this is; it changes nothing.
func (o owner) check() (ownership, error) {
	if _, err := os.Lstat(o.dir); errors.Is(err, fs.ErrNotExist) {
		return ownNothing, nil
	}
	id, idErr := o.readID()
	if idErr == nil {
		if rec, err := o.readRecord(); err == nil && rec == id {
			return ownMine, nil
		}
	}
	found, err := o.stateFound()
	if err != nil {
		return ownForeign, err
	}
	if len(found) == 0 {
		return ownNothing, nil
	}
	if errors.Is(idErr, fs.ErrNotExist) && o.earlierAgentteam() {
		return ownEarlier, nil
	}
	return ownForeign, &ForeignError{Dir: o.dir, Found: found}
}

// claim makes .agentteam/ this user's: the ignore file, a new id, the record.
func (o owner) claim() error {
	if err := o.writeIgnore(); err != nil {
		return err
	}
	unlock, err := statefile.Lock(filepath.Join(o.dir, idFile))
	if err != nil {
		return err
	}
	defer unlock()
	if id, err := o.readID(); err == nil {
		if rec, err := o.readRecord(); err == nil && rec == id {
			return nil // another process claimed it first
		}
	}
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	id := hex.EncodeToString(b[:])
	rec, err := o.recordPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(rec), 0o700); err != nil {
		return fmt.Errorf("record the workspace %s: %w", o.root, err)
	}
	if err := statefile.WriteFileAtomic(rec, []byte(id+"\n"+o.root+"\n"), 0o600); err != nil {
		return fmt.Errorf("record the workspace %s: %w", o.root, err)
	}
	return statefile.WriteFileAtomic(filepath.Join(o.dir, idFile), []byte(id+"\n"), 0o600)
}

// adopt drops the id of an existing .agentteam/ and claims it anew.
func (o owner) adopt() error {
	if _, err := os.Lstat(o.dir); err != nil {
		return fmt.Errorf("%s: %w", o.dir, err)
	}
	if err := os.Remove(filepath.Join(o.dir, idFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return o.claim()
}

// foreign is every state file of a foreign .agentteam/, nil when it is
// this user's.
func (o owner) foreign() ([]string, error) {
	if own, err := o.check(); own != ownForeign {
		return nil, err
	}
	return o.modelFiles(0)
}

// writeIgnore writes .agentteam/.gitignore unless there is one.
func (o owner) writeIgnore() error {
	f, err := os.OpenFile(filepath.Join(o.dir, ignoreFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", filepath.Join(o.dir, ignoreFile), err)
	}
	_, err = f.WriteString("# agentteam's state: never commit it\n*\n")
	return errors.Join(err, f.Close())
}

func (o owner) readID() (string, error) {
	data, err := statefile.ReadFile(filepath.Join(o.dir, idFile), 128)
	return string(bytes.TrimSpace(data)), err
}

func (o owner) readRecord() (string, error) {
	rec, err := o.recordPath()
	if err != nil {
		return "", err
	}
	data, err := statefile.ReadFile(rec, 4096)
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(string(data), "\n")
	if strings.TrimSpace(id) == "" {
		return "", errors.New("an empty record")
	}
	return strings.TrimSpace(id), nil
}

// recordPath is this user's record of the workspace.
func (o owner) recordPath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no place to record which workspaces are yours: set HOME or XDG_STATE_HOME (%w)", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(o.root))
	return filepath.Join(dir, "agentteam", "workspaces", hex.EncodeToString(sum[:16])), nil
}

// stateFound is a few of the state files, for the refusal.
func (o owner) stateFound() ([]string, error) { return o.modelFiles(3) }

// modelFiles lists the files under the guarded paths, at most limit of
// them (0: all), skipping empty regular files (locks).
func (o owner) modelFiles(limit int) ([]string, error) {
	var found []string
	errFull := errors.New("enough")
	for _, d := range o.guarded {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil {
				return err
			}
			if e.IsDir() {
				return nil
			}
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
				return nil
			}
			rel, _ := filepath.Rel(o.dir, p)
			found = append(found, filepath.ToSlash(rel))
			if limit > 0 && len(found) == limit {
				return errFull
			}
			return nil
		})
		if errors.Is(err, errFull) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("check %s: %w", d, err)
		}
	}
	return found, nil
}

// earlierAgentteam reports whether the state looks made by an earlier
// agentteam of this user's: every file this user's, and an inbox log with
// a read position in its extended attribute.
func (o owner) earlierAgentteam() bool {
	positioned := false
	for _, d := range o.guarded {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := e.Info()
			if err != nil {
				return err
			}
			if !ownedByMe(fi) {
				return errors.New("another user's")
			}
			if d == o.inbox && strings.HasSuffix(p, ".jsonl") && fi.Mode().IsRegular() {
				var buf [64]byte
				if n, err := statefile.LinkAttr(p, readPosAttr, buf[:]); err == nil && n > 0 {
					positioned = true
				}
			}
			return nil
		})
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false
		}
	}
	return positioned
}
