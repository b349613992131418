package registry

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// errNoChange lets an update function of the registry (or the board)
// decline to write.
var errNoChange = statefile.ErrNoChange

// Status is where a teammate is in its life.
type Status string

// Statuses of a teammate.
const (
	StatusQueued   Status = "queued"
	StatusWorking  Status = "working"
	StatusIdle     Status = "idle"
	StatusShutdown Status = "shutdown"
	StatusFailed   Status = "failed"
)

// live reports whether a teammate in status s is still in its life
// (waiting, working or idle), not ended.
func (s Status) Live() bool {
	return s == StatusQueued || s == StatusWorking || s == StatusIdle
}

// Member is one teammate's entry in the registry.
type Member struct {
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Status    Status    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// Turns counts model turns over all cycles; Cycles counts work cycles.
	Turns  int `json:"turns"`
	Cycles int `json:"cycles"`
	// Tokens is the total token usage reported by the model server.
	Tokens int `json:"tokens"`
	// The model the teammate talks to, and what its calls cost (team/models).
	ModelRef
	PromptTokens     int      `json:"promptTokens,omitempty"`
	CompletionTokens int      `json:"completionTokens,omitempty"`
	Cost             *float64 `json:"cost,omitempty"` // nil: unpriced tokens
	// Activity says in words what the teammate does now ("thinking", "running bash").
	Activity string `json:"activity,omitempty"`
	// PID is the agentteam process that runs this teammate.
	PID   int    `json:"pid,omitempty"`
	Error string `json:"error,omitempty"`
	// PlanMode teammates may only read until the lead approves their plan;
	// PlanState is drafting, awaiting_approval, approved or rejected.
	PlanMode  bool      `json:"planMode,omitempty"`
	PlanState PlanState `json:"planState,omitempty"`
	// Ended: shut down through the shutdown protocol; a resumed team leaves
	// it shut down (a team that merely settled comes back whole).
	Ended bool `json:"ended,omitempty"`
	// Handoffs are this teammate's latest handoffs, as sender or receiver, newest last.
	Handoffs []HandoffState `json:"handoffs,omitempty"`
	// Isolation is "worktree" for a teammate that works in its own git
	// worktree (Worktree, relative to the workspace; "" once removed) on
	// Branch; Diffstat is the branch's change against the lead's branch
	// when last looked at, and Merged says the lead's branch holds it.
	Isolation string `json:"isolation,omitempty"`
	Worktree  string `json:"worktree,omitempty"`
	Branch    string `json:"branch,omitempty"`
	Diffstat  string `json:"diffstat,omitempty"`
	Merged    bool   `json:"merged,omitempty"`
	// A worker on another host pushed the branch to the team's git remote
	// (team/worktree): PushRemote as the worker's clone names it, PushURL its
	// URL without credentials, PushedCommit the commit pushed last. The
	// lead fetches it from its own remote of that URL (or name).
	PushRemote   string `json:"pushRemote,omitempty"`
	PushURL      string `json:"pushUrl,omitempty"`
	PushedCommit string `json:"pushedCommit,omitempty"`
	// BaseNote says, in a sentence, why a worker started the teammate's
	// branch from its own HEAD rather than the lead's commit (stale code).
	BaseNote string `json:"baseNote,omitempty"`
	// Base is the lead's commit a worker was asked to start the teammate's
	// branch from (SpawnRequest.Base), kept so a respawn starts there too.
	Base string `json:"base,omitempty"`
	// On a team whose spawns go through a work queue (team/hosts): the
	// worker that runs the teammate (its id, the host it runs on), the
	// labels a worker must have to take it, and the id of the spawn
	// request that placed it ("" for a teammate run by the lead's process
	// without a queue).
	Worker  string   `json:"worker,omitempty"`
	Host    string   `json:"host,omitempty"`
	Labels  []string `json:"labels,omitempty"`
	SpawnID string   `json:"spawnId,omitempty"`

	// notOurs is set by a status change's fn that finds the entry no longer
	// its writer's (a respawn took it): the change is then refused whole.
	notOurs bool
}

// MarkTakenOver, from a status change's fn, says the entry is no longer
// its writer's (a respawn took it): the change is refused whole
// (ErrTakenOver) and nothing of it is stored.
func (m *Member) MarkTakenOver() { m.notOurs = true }

// ErrTakenOver refuses a status change of a teammate whose entry its
// writer no longer holds: its worker was taken for dead and it was
// respawned elsewhere.
var ErrTakenOver = errors.New("the teammate was taken over by its respawn on another worker")

// Config is the whole registry file, team/config.json.
type Config struct {
	TeamName  string    `json:"teamName"`
	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updatedAt"`
	// State is derived from the members at every change (see DeriveState).
	State     string   `json:"state"`
	Teammates []Member `json:"teammates"`
	// LeadHandoffs is the lead's side of its recent handoffs (it has no member entry).
	LeadHandoffs []HandoffState `json:"leadHandoffs,omitempty"`
	// Lead is the lead's model and usage, written after each of its cycles.
	Lead *LeadEntry `json:"lead,omitempty"`
	// Sandbox is how the process that runs the team confines commands, as
	// it said at its start; nil before any said.
	Sandbox *SandboxState `json:"sandbox,omitempty"`
}

// SandboxState is the sandbox of the running team, for `team` to show.
type SandboxState struct {
	On      bool   `json:"on"`
	Network bool   `json:"network"`
	Reason  string `json:"reason,omitempty"` // why it is off
	// State is the same in words: "on", "on, network off", "off (reason)".
	State string `json:"state"`
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

// Clone copies the registry deeply (a member's only reference is its handoffs).
func (c *Config) Clone() *Config {
	cp := *c
	cp.Teammates = append([]Member(nil), c.Teammates...)
	for i := range cp.Teammates {
		cp.Teammates[i].Handoffs = append([]HandoffState(nil), cp.Teammates[i].Handoffs...)
		cp.Teammates[i].Labels = slices.Clone(cp.Teammates[i].Labels)
	}
	cp.LeadHandoffs = append([]HandoffState(nil), c.LeadHandoffs...)
	if c.Lead != nil {
		l := *c.Lead
		cp.Lead = &l
	}
	return &cp
}

// Changed counts a change: the state derived anew, the version bumped, the time.
func (c *Config) Changed() {
	c.State = DeriveState(c.Teammates)
	c.Version++
	c.UpdatedAt = time.Now().UTC()
}

// Registry reads and changes team/config.json. Every change is a
// read-modify-write under a lock that other processes respect, written
// atomically, so no update is lost and no reader sees half a file.
type Registry struct {
	doc      RegistryStore
	file     *statefile.Doc[*Config] // nil when the registry is not a file
	teamName string
	// fence, if set, refuses every change before it is written (a lead's
	// process that lost the owner lock: another runs the team now).
	fence func() error
}

// fencedBy is r whose every change is refused while fence says so: checked
// inside the change, after its read and just before its write.
func (r *Registry) FencedBy(fence func() error) *Registry {
	cp := *r
	cp.fence = fence
	return &cp
}

// fenced is fn refused while r's fence says so.
func (r *Registry) fenced(fn func(*Member) error) func(*Member) error {
	if r.fence == nil {
		return fn
	}
	return func(m *Member) error {
		if err := r.fence(); err != nil {
			return err
		}
		return fn(m)
	}
}

// NewRegistry opens the registry at path; the file is created on first update.
func NewRegistry(path, teamName string) *Registry {
	teamName = registryTeamName(teamName)
	file := statefile.NewDoc(path, "registry", EmptyConfig(teamName))
	return &Registry{doc: file, file: file, teamName: teamName}
}

// NewRegistryOn is the registry kept in doc, another store than a file
// (internal/store/natsstore); doc starts from EmptyConfig(teamName).
func NewRegistryOn(doc RegistryStore, teamName string) *Registry {
	return &Registry{doc: doc, teamName: registryTeamName(teamName)}
}

// EmptyConfig is the registry of a team nobody has changed yet.
func EmptyConfig(teamName string) func() *Config {
	teamName = registryTeamName(teamName)
	return func() *Config { return &Config{TeamName: teamName, Teammates: []Member{}} }
}

func registryTeamName(name string) string {
	if name == "" {
		return "default"
	}
	return name
}

// Path is the registry file; "" when the registry is kept elsewhere.
func (r *Registry) Path() string {
	if r.file == nil {
		return ""
	}
	return r.file.Path()
}

// onWriteError makes fn see every failed write of the registry file.
func (r *Registry) OnWriteError(fn func(error)) {
	if r.file != nil {
		r.file.OnWriteError = fn
	}
}

// Read returns the registry as it is on disk; a missing file is an empty team.
func (r *Registry) Read(ctx context.Context) (Config, error) {
	c, err := r.doc.Read(ctx)
	if err != nil {
		return Config{}, err
	}
	return r.normal(c), nil
}

func (r *Registry) normal(c *Config) Config {
	if c.Teammates == nil {
		c.Teammates = []Member{}
	}
	if c.TeamName == "" {
		c.TeamName = r.teamName
	}
	return *c
}

// change is fn followed by what every written registry needs: a team name
// and the members in the order they were created.
func (r *Registry) change(fn func(*Config) error) func(**Config) error {
	return func(c **Config) error {
		if r.fence != nil {
			if err := r.fence(); err != nil {
				return err
			}
		}
		if err := fn(*c); err != nil {
			return err
		}
		if (*c).TeamName == "" {
			(*c).TeamName = r.teamName
		}
		if !createdInOrder((*c).Teammates, false) {
			byCreation := func(a, b Member) int { return a.CreatedAt.Compare(b.CreatedAt) }
			slices.SortStableFunc((*c).Teammates, byCreation)
		}
		return nil
	}
}

// Change applies fn to the current registry and returns once the change
// is on disk, the version bumped once; errNoChange from fn writes nothing.
// fn fails (if at all) before it changes anything, and whatever it needs
// of the result it reads inside: no caller is made a copy of the whole
// registry (with 200 members, the copies were a tenth of a run's CPU).
func (r *Registry) Change(ctx context.Context, fn func(*Config) error) error {
	// r.doc may become another store than the file; one without
	// Change is changed in place all the same.
	if d, ok := any(r.doc).(docChanger); ok {
		return d.Change(ctx, r.change(fn))
	}
	_, err := r.doc.UpdateInPlace(ctx, r.change(fn))
	return err
}

// docChanger is a store of the registry document with statefile.Doc's Change.
type docChanger interface {
	Change(ctx context.Context, fn func(**Config) error) error
}

// keyedDoc is a store of the registry document with statefile.Doc's
// keyed changes: two of one key never share a write.
type keyedDoc interface {
	ChangeKeyed(ctx context.Context, key string, fn func(**Config) error) error
	SubmitKeyed(ctx context.Context, key string, fn func(**Config) error, after func(error))
}

// ChangeStatus changes one member's status (and the fields fn sets) and
// returns once it is stored. No other status change of the member shares its write, so when
// it returns the registry shows this status (until the member's next change).
func (r *Registry) ChangeStatus(ctx context.Context, name string, status Status, fn func(*Member)) error {
	if d, ok := r.doc.(memberChanger); ok {
		return d.ChangeMember(ctx, name, r.fenced(memberStatusChange(status, fn)))
	}
	change := r.change(statusChange(name, status, fn))
	if d, ok := any(r.doc).(keyedDoc); ok {
		return d.ChangeKeyed(ctx, name, change)
	}
	_, err := r.doc.UpdateInPlace(ctx, change)
	return err
}

// NoTeammateError is a change of one teammate the registry does not hold.
type NoTeammateError struct{ name string }

func (e NoTeammateError) Error() string {
	return fmt.Sprintf("no teammate named %q in the registry", e.name)
}

// ChangeTeammate applies fn, which fails (if at all) before it changes
// anything, to the teammate named name alone: on entries a compare-and-set
// of its entry, not a whole-registry update (those write the team's entry
// and are serial). A teammate not held is a NoTeammateError.
func (r *Registry) ChangeTeammate(ctx context.Context, name string, fn func(*Member) error) error {
	if d, ok := r.doc.(memberChanger); ok {
		return d.ChangeMember(ctx, name, r.fenced(fn))
	}
	return r.Change(ctx, TeammateChange(name, fn))
}

// teammateChange is fn, a change of the teammate named name, as a change
// of the whole registry: one not held is a NoTeammateError.
func TeammateChange(name string, fn func(*Member) error) func(*Config) error {
	return func(c *Config) error {
		i := c.Find(name)
		if i < 0 {
			return NoTeammateError{name}
		}
		return fn(&c.Teammates[i])
	}
}

// SetStatusLater is ChangeStatus without waiting: the change joins the next
// write (changes made meanwhile share it), in order with every other
// change of this Registry, and after is called with its outcome once it is
// on disk. after runs on the writing goroutine and must not change the
// registry itself. Flush waits for such changes. It takes no ctx: nobody
// waits for the change, which is written after its caller has moved on
// (a teammate's last status, once its run has ended), so there is no
// caller's wait to cut short.
func (r *Registry) SetStatusLater(name string, status Status, fn func(*Member), after func(error)) {
	ctx := context.Background() // no caller waits for the change (see above)
	if d, ok := r.doc.(memberChanger); ok {
		after(d.ChangeMember(ctx, name, r.fenced(memberStatusChange(status, fn))))
		return
	}
	change := r.change(statusChange(name, status, fn))
	if d, ok := any(r.doc).(keyedDoc); ok {
		// Never in one write with another status change of the member: each
		// status is on disk by itself before its event (after) is written.
		d.SubmitKeyed(ctx, name, change, after)
		return
	}
	r.doc.Submit(ctx, change, after)
}

// Flush returns once every change made through this Registry is on disk.
// It takes no ctx: it changes nothing and waits only for writes under way.
func (r *Registry) Flush() { r.doc.Flush() }

// memberChanger is a store of the registry that keeps each teammate apart
// (entryRegistry): a change of one teammate reads and writes it alone.
type memberChanger interface {
	ChangeMember(ctx context.Context, name string, fn func(*Member) error) error
}

// memberStatusChange is statusChange for one teammate's entry: refused
// (ErrTakenOver), with nothing stored, when fn finds the entry no longer
// its writer's claim.
func memberStatusChange(status Status, fn func(*Member)) func(*Member) error {
	return func(m *Member) error {
		m.Status = status
		m.UpdatedAt = time.Now().UTC()
		if fn != nil {
			fn(m)
		}
		if m.notOurs {
			return fmt.Errorf("status of %s: %w", m.Name, ErrTakenOver)
		}
		return nil
	}
}

// statusChange fails, if at all, before it changes anything.
func statusChange(name string, status Status, fn func(*Member)) func(*Config) error {
	return func(c *Config) error {
		i := c.Find(name)
		if i < 0 {
			return fmt.Errorf("no teammate named %q in the registry", name)
		}
		m := &c.Teammates[i]
		orig := *m
		m.Status = status
		m.UpdatedAt = time.Now().UTC()
		if fn != nil {
			fn(m)
		}
		if m.notOurs {
			*m = orig
			return fmt.Errorf("status of %s: %w", name, ErrTakenOver)
		}
		return nil
	}
}

// RepairDead marks members left queued or working by a process that no
// longer runs as failed, so nobody is shown working forever.
func (r *Registry) RepairDead(ctx context.Context, alive func(pid int) bool) ([]string, error) {
	return r.RepairRunning(ctx, func(m *Member) bool { return m.PID > 0 && alive(m.PID) })
}

// repairDead marks members left queued or working as failed unless running
// says they still run.
func (r *Registry) RepairRunning(ctx context.Context, running func(*Member) bool) ([]string, error) {
	var repaired []string
	err := r.Change(ctx, func(c *Config) error {
		repaired = repaired[:0]
		for i := range c.Teammates {
			m := &c.Teammates[i]
			if m.Status != StatusQueued && m.Status != StatusWorking {
				continue
			}
			if running(m) {
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

// createdInOrder reports whether ms is in creation order (by name too,
// with byName, among members created at one time): slices.IsSortedFunc
// without its copies of two whole members per comparison, which at every
// change of a large team's registry were a cost of their own.
func createdInOrder(ms []Member, byName bool) bool {
	for i := 1; i < len(ms); i++ {
		switch ms[i].CreatedAt.Compare(ms[i-1].CreatedAt) {
		case -1:
			return false
		case 0:
			if byName && ms[i].Name < ms[i-1].Name {
				return false
			}
		}
	}
	return true
}
