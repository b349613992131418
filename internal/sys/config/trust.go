package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/internal/sys/permission"
)

// A project file's settings that would let more run without asking apply
// only once the person has trusted the project. Trust lives in the
// person's own state, never in the workspace, keyed by the workspace's
// real path and bound to the project file's bytes: a changed file is a
// file nobody trusted yet.

// TrustPath is where the trusted projects are recorded:
// $XDG_STATE_HOME/agentteam/trusted.json (absolute, as the XDG spec asks),
// else ~/.local/state/agentteam/trusted.json; "" when neither is set.
func TrustPath(getenv func(string) string) string {
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "agentteam", "trusted.json")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "agentteam", "trusted.json")
	}
	return ""
}

// Trusted is one trusted project.
type Trusted struct {
	// Workspace is the workspace's real path.
	Workspace string `json:"-"`
	// SHA256 is the project file's, in hex, when it was trusted.
	SHA256 string    `json:"sha256"`
	At     time.Time `json:"trusted_at"`
}

type trustFile struct {
	Projects map[string]Trusted `json:"projects"`
}

// trustLimit bounds the trust file: a few hundred bytes per project.
const trustLimit = 4 << 20

// readTrust reads the trust file; a missing one trusts nothing.
func readTrust(path string) (trustFile, error) {
	tf := trustFile{Projects: map[string]Trusted{}}
	data, err := statefile.ReadFile(path, trustLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return tf, nil
	}
	if err != nil {
		return tf, fmt.Errorf("the trusted projects in %s cannot be read: %w", path, statefile.Refusal(err))
	}
	if err := json.Unmarshal(data, &tf); err != nil {
		return trustFile{Projects: map[string]Trusted{}}, fmt.Errorf("the trusted projects in %s are not valid JSON: %v", path, err)
	}
	if tf.Projects == nil {
		tf.Projects = map[string]Trusted{}
	}
	return tf, nil
}

// changeTrust applies change to the trust file under its lock and writes
// it back atomically, readable by the person alone.
func changeTrust(getenv func(string) string, change func(*trustFile)) error {
	path := TrustPath(getenv)
	if path == "" {
		return errors.New("neither XDG_STATE_HOME nor HOME is set: there is nowhere to record trust")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("record trust: %w", err)
	}
	unlock, err := statefile.Lock(path)
	if err != nil {
		return fmt.Errorf("record trust: %w", err)
	}
	defer unlock()
	tf, err := readTrust(path)
	if err != nil {
		return err
	}
	change(&tf)
	data, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return err
	}
	return statefile.WriteFileAtomic(path, append(data, '\n'), 0o600)
}

// workspaceKey is the workspace's real path, the key of its trust.
func workspaceKey(workspace string) (string, error) {
	if workspace == "" {
		workspace = "."
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workspace %s: %w", abs, err)
	}
	return real, nil
}

func sum(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// isTrusted reports whether the person trusted workspace's project file
// holding exactly the bytes whose SHA-256 is sha; an error says why trust
// could not be read (the project counts as not trusted).
func isTrusted(getenv func(string) string, workspace, sha string) (bool, error) {
	path := TrustPath(getenv)
	if path == "" {
		return false, nil
	}
	key, err := workspaceKey(workspace)
	if err != nil {
		return false, err
	}
	tf, err := readTrust(path)
	if err != nil {
		return false, err
	}
	return tf.Projects[key].SHA256 == sha, nil
}

// Project is a project file as read for trust: where it is, its bytes'
// SHA-256 and what it says that applies only once trusted.
type Project struct {
	Path, SHA256 string
	// Workspace is the workspace's real path.
	Workspace string
	// Widening are those settings, one per line as `agentteam trust` shows them.
	Widening []string
	// Trusted says whether the person trusted these bytes.
	Trusted bool
}

// ReadProject reads and checks workspace's project file for trust; a
// missing file is an error saying there is nothing to trust.
func ReadProject(getenv func(string) string, workspace string) (*Project, error) {
	path := ProjectPath(workspace)
	f, found, err := readFile(path, true)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("there is no project file at %s: nothing to trust", path)
	}
	key, err := workspaceKey(workspace)
	if err != nil {
		return nil, err
	}
	p := &Project{Path: path, SHA256: f.sha256, Workspace: key, Widening: f.held(projectSource, Value[permission.Mode]{}).lines()}
	p.Trusted, err = isTrusted(getenv, workspace, f.sha256)
	return p, err
}

// Trust records that the person trusts p's bytes; a project file changed
// since p was read is not trusted by it.
func Trust(getenv func(string) string, p *Project) error {
	return changeTrust(getenv, func(tf *trustFile) {
		tf.Projects[p.Workspace] = Trusted{SHA256: p.SHA256, At: time.Now().UTC()}
	})
}

// Revoke forgets the trust of workspace's project; it reports whether
// there was any.
func Revoke(getenv func(string) string, workspace string) (bool, error) {
	key, err := workspaceKey(workspace)
	if err != nil {
		return false, err
	}
	had := false
	err = changeTrust(getenv, func(tf *trustFile) {
		_, had = tf.Projects[key]
		delete(tf.Projects, key)
	})
	return had, err
}

// TrustedProjects lists the trusted projects by workspace.
func TrustedProjects(getenv func(string) string) ([]Trusted, error) {
	path := TrustPath(getenv)
	if path == "" {
		return nil, nil
	}
	tf, err := readTrust(path)
	if err != nil {
		return nil, err
	}
	out := make([]Trusted, 0, len(tf.Projects))
	for ws, t := range tf.Projects {
		t.Workspace = ws
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Workspace < out[j].Workspace })
	return out, nil
}
