// Package hosts is a team's process as one of its workers, on any host:
// the work queue of spawn requests, the workers' heartbeats, and the loop
// that takes a request when the pool has a place.
//
//   - A lead's spawn registers the teammate queued, delivers its prompt to
//     its inbox and publishes a Request; any worker (`agentteam worker` on
//     any host, and the lead's own process) with the labels and a free
//     place takes it, claims it in the registry and runs it (Runner).
//   - Each worker holds a heartbeat (a lease renewed every Beat). One that
//     loses it takes nothing and fences its teammates (Runner.Fence) until
//     it holds one again; the lead's process watches the others' and
//     reaps the teammates of a worker whose heartbeat is gone
//     (Runner.Reap).
//   - A request that no live worker offers the labels for fails at its
//     deadline (Runner.Unplaced); one not signed by the team's lead is
//     refused (Runner.Verify, Runner.Refuse).
package hosts

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/sys/gitwt"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/tools"
)

// SpawnQueue is the team's work queue of spawn requests, shared by every
// worker (natsstore.Queue): a request is taken by one worker at a time.
type SpawnQueue interface {
	// Publish stores one request under id; the same id again is one request.
	Publish(ctx context.Context, id string, data []byte) error
	// Next waits for a request and takes it, until ctx ends.
	Next(ctx context.Context) (QueueJob, error)
}

// QueueJob is a request taken from the queue.
type QueueJob interface {
	Data() []byte
	Delivered() int // how often it was handed to a worker, this time included
	Ack(ctx context.Context) error
	Nak(delay time.Duration) error // back to the queue, offered again after delay
	Term() error                   // dropped for good
}

// Heartbeats are the workers' heartbeats (natsstore.Workers): a lease per
// worker that expires unless renewed.
type Heartbeats interface {
	// Hold takes worker id's heartbeat and keeps it alive until Release,
	// or until it is lost (not renewed within a bound shorter than its
	// time to live: this worker may be cut off). It fails while another
	// holds id or its heartbeat has not expired yet.
	Hold(ctx context.Context, id string, info []byte) (Heartbeat, error)
	// Watch reports each present heartbeat, then every change; current
	// is closed once the present ones are all given.
	Watch(ctx context.Context) (changes <-chan WorkerChange, current <-chan struct{}, err error)
	// Alive lists the workers whose heartbeat is alive now.
	Alive(ctx context.Context) (map[string][]byte, error)
}

// Heartbeat is this worker's, held.
type Heartbeat interface {
	Lost() <-chan struct{}
	Err() error
	Release(ctx context.Context) error
}

// WorkerChange is a worker's heartbeat seen, or gone (expired, released).
type WorkerChange struct {
	ID   string
	Gone bool
}

// Options say who this process is as one of a team's workers.
type Options struct {
	// ID names the worker in the registry and its heartbeat (letters,
	// digits, '-' and '_'); default HOST-PID.
	ID string
	// Host is where it runs; default the host name.
	Host string
	// Labels are what it offers: it takes only requests whose labels it all has.
	Labels []string
	// Placement bounds, in the lead's process, how long a spawn may wait
	// for a worker with its labels; then it fails. Default DefaultPlacement.
	Placement time.Duration
	// Beat is how often the heartbeat is renewed (default 2s); a worker
	// not heard of for the heartbeat's TTL is taken for dead.
	Beat time.Duration
	// GitRemote is the remote of this clone the team's work goes through
	// (team/worktree): on a worker that is not the lead's process each
	// teammate's branch is pushed there; in the lead's, the commit a
	// worktree teammate starts from ("" for both: none). KeyEnv names the
	// model API key's variable, which git never gets.
	GitRemote, KeyEnv string
}

// DefaultPlacement bounds the wait of a spawn for a worker that may take it.
const DefaultPlacement = time.Minute

// placementRetry is how long a request a worker may not take waits before
// it is offered again; maxPlacementTries bounds its offers whatever the time.
const (
	placementRetry    = 300 * time.Millisecond
	maxPlacementTries = 2000
)

// Request is one spawn on the work queue: who to run and how. The
// prompt is not in it: the lead delivered it to the teammate's inbox
// first (PromptID), so the worker finds it there like any message.
type Request struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Role      string   `json:"role"`
	From      string   `json:"from"`
	PromptID  string   `json:"promptId,omitempty"`
	Provider  string   `json:"provider,omitempty"`
	Model     string   `json:"model,omitempty"`
	PlanMode  bool     `json:"planMode,omitempty"`
	Isolation string   `json:"isolation,omitempty"`
	Labels    []string `json:"labels,omitempty"`
	// Base, for isolation worktree, is the lead's HEAD commit: the worker
	// starts the teammate's branch there (fetched from the team's git
	// remote), not at its own clone's HEAD, which may be behind.
	Base string `json:"base,omitempty"`
	// Deadline: a request nobody could take by then is failed.
	Deadline time.Time `json:"deadline"`
	// Resume: the teammate goes on with its conversation in the team's
	// session store (its worker died), instead of starting afresh.
	Resume bool `json:"resume,omitempty"`
	// Asks: who answers the teammate's permission asks (user, lead, or ""
	// for nobody), for a worker that follows the team (permgate.Rules).
	Asks string `json:"asks,omitempty"`
	// AskTimeout: how long each of those asks waits for its answer.
	AskTimeout time.Duration `json:"askTimeout,omitempty"`
	// Mode: the lead's permission mode, which a worker whose person set
	// none runs the teammate in (permgate.Options.FollowMode).
	Mode permission.Mode `json:"mode,omitempty"`
	// Deny: the lead's deny rules, added to the worker's own for this
	// teammate; its allow rules never travel.
	Deny []string `json:"deny,omitempty"`
	// LeadClaim and Signature: the lead's sender claim when it published
	// the request, and its signature with that claim's key.
	LeadClaim uint64 `json:"leadClaim,omitempty"`
	Signature []byte `json:"signature,omitempty"`
}

// Check refuses a request no lead of ours would send: it came off the
// wire and names a teammate, a model and a place.
func (q *Request) Check() error {
	if q.ID == "" || len(q.ID) > 200 {
		return fmt.Errorf("no usable request id")
	}
	if err := inbox.ValidateTeammateName(q.Name); err != nil {
		return err
	}
	if err := inbox.ValidateName(q.From); err != nil {
		return fmt.Errorf("from: %w", err)
	}
	if q.Role = strings.TrimSpace(q.Role); q.Role == "" || len(q.Role) > 200 {
		return fmt.Errorf("role: empty or over 200 bytes")
	}
	if len(q.Provider) > 200 || len(q.Model) > 200 {
		return fmt.Errorf("model: over 200 bytes")
	}
	if err := worktree.CheckIsolation(q.Isolation); err != nil {
		return err
	}
	if q.Base != "" && !gitwt.IsCommitID(q.Base) {
		return fmt.Errorf("base: %.80q is no commit id", q.Base)
	}
	if err := permgate.CheckAsks(q.Asks, q.AskTimeout, q.Mode); err != nil {
		return err
	}
	if err := permgate.CheckDeny(q.Deny); err != nil {
		return err
	}
	for _, l := range q.Labels {
		if err := tools.CheckLabel(l); err != nil {
			return err
		}
	}
	return nil
}

// WorkerInfo is what a worker's heartbeat says of it.
type WorkerInfo struct {
	Host   string   `json:"host"`
	PID    int      `json:"pid"`
	Labels []string `json:"labels,omitempty"`
	Lead   bool     `json:"lead,omitempty"`
	// Since is when it started: an ask older than that is not its to wait for.
	Since time.Time `json:"since,omitzero"`
	// Isolation is "worktree" when its person asked for worktrees: it runs
	// every teammate in one, from the lead's commit (Request.Base).
	Isolation string `json:"isolation,omitempty"`
}

// WorkerID is a worker's default id: its host and PID as one token.
func WorkerID(host string, pid int) string {
	var b strings.Builder
	for _, r := range host {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	id := b.String()
	if len(id) > 40 {
		id = id[:40]
	}
	return id + "-" + strconv.Itoa(pid)
}

// NormalLabels are labels sorted without repeats; nil for none.
func NormalLabels(ls []string) []string {
	if len(ls) == 0 {
		return nil
	}
	out := slices.Clone(ls)
	slices.Sort(out)
	return slices.Compact(out)
}

// HasLabels reports whether a worker with have may take a request asking want.
func HasLabels(have, want []string) bool {
	for _, l := range want {
		if !slices.Contains(have, l) {
			return false
		}
	}
	return true
}
