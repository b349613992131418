package team

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// Statuses of a teammate (SPEC §3).
const (
	StatusQueued   = "queued"
	StatusWorking  = "working"
	StatusIdle     = "idle"
	StatusShutdown = "shutdown"
	StatusFailed   = "failed"
)

// Member is one teammate's entry in the registry.
type Member struct {
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Turns counts model turns over all cycles; Cycles counts work cycles.
	Turns  int `json:"turns"`
	Cycles int `json:"cycles"`
	// Tokens is the total token usage reported by the model server.
	Tokens int `json:"tokens"`
	// Activity says in words what the teammate does now ("thinking", "running bash").
	Activity string `json:"activity,omitempty"`
	// PID is the agentteam process that runs this teammate.
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
}

// Config is the whole registry file, team/config.json.
type Config struct {
	TeamName  string    `json:"teamName"`
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updatedAt"`
	Teammates []Member  `json:"teammates"`
}

// Find returns the index of the named member, or -1.
func (c *Config) Find(name string) int {
	for i := range c.Teammates {
		if c.Teammates[i].Name == name {
			return i
		}
	}
	return -1
}

// Registry reads and changes team/config.json. Every change is a
// read-modify-write under a lock that other processes respect, written
// atomically, so no update is lost and no reader sees half a file.
type Registry struct {
	path     string
	teamName string
}

// NewRegistry opens the registry at path; the file is created on first update.
func NewRegistry(path, teamName string) *Registry {
	if teamName == "" {
		teamName = "default"
	}
	return &Registry{path: path, teamName: teamName}
}

// Path is the registry file.
func (r *Registry) Path() string { return r.path }

// Read returns the registry as it is on disk; a missing file is an empty team.
func (r *Registry) Read() (Config, error) {
	data, err := os.ReadFile(r.path)
	if errors.Is(err, fs.ErrNotExist) {
		return Config{TeamName: r.teamName, Teammates: []Member{}}, nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read registry: %w", err)
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return Config{}, fmt.Errorf("registry %s is not valid JSON (%v); fix or remove it", r.path, err)
	}
	if c.Teammates == nil {
		c.Teammates = []Member{}
	}
	return c, nil
}

// errNoChange lets an update function decline to write.
var errNoChange = errors.New("no change")

// Update applies fn to the current registry and writes the result, bumping
// the version once. If fn returns errNoChange nothing is written.
func (r *Registry) Update(fn func(*Config) error) (Config, error) {
	if err := os.MkdirAll(filepath.Dir(r.path), 0o755); err != nil {
		return Config{}, fmt.Errorf("create registry directory: %w", err)
	}
	unlock, err := inbox.Lock(r.path)
	if err != nil {
		return Config{}, fmt.Errorf("lock registry: %w", err)
	}
	defer unlock()
	c, err := r.Read()
	if err != nil {
		return Config{}, err
	}
	if err := fn(&c); err != nil {
		if errors.Is(err, errNoChange) {
			return c, nil
		}
		return c, err
	}
	now := time.Now().UTC()
	c.Version++
	c.UpdatedAt = now
	if c.TeamName == "" {
		c.TeamName = r.teamName
	}
	sort.SliceStable(c.Teammates, func(i, j int) bool {
		return c.Teammates[i].CreatedAt.Before(c.Teammates[j].CreatedAt)
	})
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return c, fmt.Errorf("encode registry: %w", err)
	}
	if err := inbox.WriteFileAtomic(r.path, append(data, '\n'), 0o644); err != nil {
		return c, fmt.Errorf("write registry: %w", err)
	}
	return c, nil
}

// SetStatus changes one member's status (and optional fields via fn).
func (r *Registry) SetStatus(name, status string, fn func(*Member)) (Config, error) {
	return r.Update(func(c *Config) error {
		i := c.Find(name)
		if i < 0 {
			return fmt.Errorf("no teammate named %q in the registry", name)
		}
		m := &c.Teammates[i]
		m.Status = status
		m.UpdatedAt = time.Now().UTC()
		if fn != nil {
			fn(m)
		}
		return nil
	})
}

// RepairDead marks members left queued or working by a process that no
// longer runs as failed, so nobody is shown working forever.
func (r *Registry) RepairDead(alive func(pid int) bool) ([]string, error) {
	var repaired []string
	_, err := r.Update(func(c *Config) error {
		repaired = repaired[:0]
		for i := range c.Teammates {
			m := &c.Teammates[i]
			if m.Status != StatusQueued && m.Status != StatusWorking {
				continue
			}
			if m.PID > 0 && alive(m.PID) {
				continue
			}
			m.Error = fmt.Sprintf("the agentteam process (pid %d) that ran it is gone", m.PID)
			m.Status = StatusFailed
			m.Activity = ""
			m.UpdatedAt = time.Now().UTC()
			repaired = append(repaired, m.Name)
		}
		if len(repaired) == 0 {
			return errNoChange
		}
		return nil
	})
	return repaired, err
}
