package launch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/board"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// StoreEnv selects the store when --store is not given.
const StoreEnv = "AGENTTEAM_STORE"

// natsConnectTimeout bounds the dial of a NATS server; NATSOpenTimeout the
// creation of the team's streams and buckets once connected: on a cluster
// each is agreed by its nodes, and several processes started at once
// (a lead and its workers) create them together; on loaded nodes that took
// over 10 s (the failover test under -race: a worker failed to start).
const (
	natsConnectTimeout = 3 * time.Second
	NATSOpenTimeout    = 30 * time.Second
)

// MailStore is the inboxes as the commands read and write them, on either
// store: *inbox.Store or *natsstore.Mailbox.
type MailStore interface {
	Append(ctx context.Context, name string, m inbox.Message) (inbox.Message, error)
	ReadAll(ctx context.Context, name string) ([]inbox.Message, []inbox.BadLine, error)
	Stats(ctx context.Context, name string) (inbox.Stats, error)
	Names(ctx context.Context) ([]string, error)
	// Path names an inbox in a sentence: its file, or its stream and subject.
	Path(name string) string
}

// Stores are a workspace's shared state as one command opened it: the
// workspace's files (the default) or a team on a NATS JetStream server.
// The owner lock is a file in the workspace, or a lease on the server.
type Stores struct {
	// Where says in words where the state is ("files", the server).
	Where    string
	Mail     MailStore
	Registry *registry.Registry
	Board    *board.Board
	// Lines are the event log's lines; nil for the file events.jsonl.
	Lines   event.EventLines
	Mailbox team.Mailbox // nil for the files: team.Open makes its own
	// Owner is the team's owner lock: the workspace's file or the lease.
	Owner registry.OwnerLock
	// Sessions keep the teammates' conversations; nil for the files (the
	// lead's is a file either way).
	Sessions team.SessionStore
	Close    func()
	NATS     bool
	// Conn, Spec and Copies open the rest of a NATS team on demand (Hosts).
	Conn   *nats.Conn
	Spec   StoreSpec
	Copies []natsstore.MailboxOption
}

// StoreSpec is a parsed --store: files, or a NATS server and a team.
type StoreSpec struct {
	Server string // nats:// or tls://host:port, with any user info; "" for files
	Shown  string // the URL as said in sentences (no password)
	Team   string
	// Replicas is ?replicas=N: copies of each stream and the bucket (1, 3
	// or 5); 0 when not given (new ones get one, existing ones keep theirs).
	Replicas int
	// Role is the command's: whose of serve's credentials it takes on
	// this host when the environment names none.
	Role natsconn.Role
}

// StoreURL is what selects the store: --store, else AGENTTEAM_STORE
// (the flag's default), else [team] store of the user's config file.
func StoreURL(g *GlobalOptions) (string, error) {
	if g.Store != "" {
		return g.Store, nil
	}
	if g.Config != nil { // run and chat read both files (a project file may not say it)
		return g.Config.Team.Store.V, nil
	}
	v, err := config.UserStore(g.Getenv)
	if err != nil {
		return "", &exit.Error{Code: exit.Usage, Err: err}
	}
	return v.V, nil
}

// ParseStore reads a store URL: "" or "file" for the files, or
// nats://HOST:PORT[/TEAM][?replicas=N], or the same with tls://, which
// connects only over TLS (the server's certificate checked against the CA
// file AGENTTEAM_NATS_CA names, else the system's); TEAM (default "default") prefixes
// the team's streams, bucket and subjects, so it must be one NATS token.
// HOST:PORT may be every node of a cluster, comma-separated
// (nats://a:4222,b:4222,c:4222/TEAM): the client starts on any that
// answers and moves to another when its node goes down.
func ParseStore(raw string) (StoreSpec, error) {
	if raw == "" || raw == "file" {
		return StoreSpec{}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "nats" && u.Scheme != "tls" || u.Host == "" || u.Opaque != "" {
		return StoreSpec{}, exit.Usagef("--store %q: use file, nats://HOST:PORT[/TEAM][?replicas=N] or tls://HOST:PORT[/TEAM][?replicas=N]", redactStore(raw))
	}
	if u.Fragment != "" {
		return StoreSpec{}, exit.Usagef("--store %s: a NATS store takes no fragment", u.Redacted())
	}
	replicas, err := parseReplicas(u)
	if err != nil {
		return StoreSpec{}, err
	}
	name := strings.Trim(u.Path, "/")
	if name == "" {
		name = "default"
	}
	if s := natsstore.ReservedSuffix(name); s != "" {
		return StoreSpec{}, exit.Usagef("--store %s: the team name %q may not end with %q: that names a stream of team %s; choose another name",
			u.Redacted(), name, s, strings.TrimSuffix(name, s))
	}
	if err := natsstore.CheckTeamName(name); err != nil {
		return StoreSpec{}, exit.Usagef("--store %s: the team name %q must be one NATS token: letters, digits, '-' and '_'", u.Redacted(), name)
	}
	server := &url.URL{Scheme: u.Scheme, User: u.User, Host: u.Host}
	shown := &url.URL{Scheme: u.Scheme, Host: u.Host}
	return StoreSpec{Server: server.String(), Shown: shown.String(), Team: name, Replicas: replicas}, nil
}

// parseReplicas reads the one query a NATS store takes, ?replicas=N with
// N 1, 3 or 5 (a majority of N nodes must stay up); 0 without it.
func parseReplicas(u *url.URL) (int, error) {
	if u.RawQuery == "" {
		return 0, nil
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil || len(q) != 1 || len(q["replicas"]) != 1 {
		return 0, exit.Usagef("--store %s: a NATS store takes one query, ?replicas=1, 3 or 5", u.Redacted())
	}
	switch v := q.Get("replicas"); v {
	case "1", "3", "5":
		return int(v[0] - '0'), nil
	default:
		return 0, exit.Usagef("--store %s: replicas=%q: use 1, 3 or 5 copies (an odd count, so a majority survives)", u.Redacted(), v)
	}
}

// redactStore hides anything that may be a password in a store URL that
// does not parse.
func redactStore(raw string) string {
	if i := strings.LastIndexByte(raw, '@'); i >= 0 {
		return "…" + raw[i:]
	}
	return raw
}

// OpenStores opens the shared state of ws as --store says, as the lead
// (run, chat). The caller closes it.
func OpenStores(ctx context.Context, g *GlobalOptions, ws *workspace.Workspace) (*Stores, error) {
	return OpenStoresAs(ctx, g, ws, natsconn.RoleLead)
}

// OpenStoresAs is OpenStores for a command in role: on a NATS store, it
// takes role's credentials of this host's serve.
func OpenStoresAs(ctx context.Context, g *GlobalOptions, ws *workspace.Workspace, role natsconn.Role) (*Stores, error) {
	raw, err := StoreURL(g)
	if err != nil {
		return nil, err
	}
	spec, err := ParseStore(raw)
	if err != nil {
		return nil, err
	}
	spec.Role = role
	if spec.Server == "" {
		files := inbox.NewStore(ws.InboxDir())
		return &Stores{
			Where:    "files",
			Mail:     files,
			Registry: registry.NewRegistry(ws.RegistryPath(), ""),
			Board:    board.New(ws.TasksPath()),
			Owner:    registry.FileOwnerLock(ws.TeamDir()),
			Close:    func() { _ = files.Close() },
		}, nil
	}
	return openNATS(ctx, g, spec)
}

// openNATS connects to spec's server and opens its team's inboxes,
// registry, board and event log.
func openNATS(ctx context.Context, g *GlobalOptions, spec StoreSpec) (*Stores, error) {
	// A request the server refuses for lack of permission would only time
	// out: the refusal ends the opening at once, and is its sentence.
	ctx, refuse := context.WithCancelCause(ctx)
	defer refuse(nil)
	nc, err := connectNATS(ctx, g, spec, func(err error) { refuse(err) })
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			nc.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, NATSOpenTimeout)
	defer cancel()
	fail := func(err error) error {
		if cause := context.Cause(ctx); cause != nil && errors.Is(cause, nats.ErrPermissionViolation) {
			err = fmt.Errorf("these credentials may not reach it: %w", cause)
		}
		return &exit.Error{Code: exit.Failure, Err: fmt.Errorf("open team %s on the NATS server at %s: %w", spec.Team, spec.Shown, err)}
	}
	if err := natsconn.CheckAccess(ctx, nc, spec.Team); err != nil {
		return nil, fail(err)
	}
	var copies []natsstore.MailboxOption
	if spec.Replicas > 0 {
		copies = append(copies, natsstore.Replicas(spec.Replicas))
	}
	mb, err := natsstore.OpenMailbox(ctx, nc, spec.Team, copies...)
	if err != nil {
		return nil, fail(err)
	}
	// The registry is an entry per teammate; one kept whole by
	// an earlier version is carried over.
	entries, err := natsstore.OpenEntries(ctx, nc, spec.Team, "registry", registry.DecodeRegistryEntry, copies...)
	if err != nil {
		return nil, fail(err)
	}
	defer func() {
		if !ok {
			entries.Close()
		}
	}()
	whole, err := natsstore.OpenDocWith(ctx, nc, spec.Team, "registry", registry.EmptyConfig(spec.Team), copies...)
	if err != nil {
		return nil, fail(err)
	}
	reg, err := registry.NewRegistryOnEntries(ctx, entries, spec.Team, whole)
	if err != nil {
		return nil, fail(err)
	}
	bd, err := natsstore.OpenDocWith(ctx, nc, spec.Team, "board", board.Empty, copies...)
	if err != nil {
		return nil, fail(err)
	}
	lines, err := natsstore.OpenEventLog(ctx, nc, spec.Team, copies...)
	if err != nil {
		return nil, fail(err)
	}
	leases, err := natsstore.OpenLeases(ctx, nc, spec.Team, copies...)
	if err != nil {
		return nil, fail(err)
	}
	sessions, err := natsstore.OpenSessions(ctx, nc, spec.Team, copies...)
	if err != nil {
		return nil, fail(err)
	}
	ok = true
	return &Stores{
		Where:    "team " + spec.Team + " on " + spec.Shown,
		Mail:     mb,
		Mailbox:  mb,
		Registry: reg,
		Board:    board.NewOn(bd),
		Lines:    lines,
		// The owner lease renews on a connection of its own: the team's
		// traffic on nc must not make it late.
		Owner: natsstore.NewOwner(leases, spec.Team, spec.Shown).RenewOn(func(ctx context.Context) (*nats.Conn, error) {
			return connectNATS(ctx, g, spec, nil)
		}),
		Sessions: natsSessions{sessions},
		Close:    func() { entries.Close(); nc.Close() },
		NATS:     true,
		Conn:     nc,
		Spec:     spec,
		Copies:   copies,
	}, nil
}

// Hosts makes a team opened with o one across hosts when these stores are
// a NATS server: its spawns go through the team's work queue, which this
// process serves as one of the workers, with a heartbeat. The files need
// neither: every teammate runs in the one process.
func (s *Stores) Hosts(ctx context.Context, o *team.Options) error {
	if !s.NATS {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, NATSOpenTimeout)
	defer cancel()
	fail := func(err error) error {
		return &exit.Error{Code: exit.Failure, Err: fmt.Errorf("open team %s on the NATS server at %s: %w", s.Spec.Team, s.Spec.Shown, err)}
	}
	q, err := natsstore.OpenQueue(ctx, s.Conn, s.Spec.Team, s.Copies...)
	if err != nil {
		return fail(err)
	}
	beats, err := natsstore.OpenWorkers(ctx, s.Conn, s.Spec.Team, s.Copies...)
	if err != nil {
		return fail(err)
	}
	o.Queue, o.Heartbeats = spawnQueue{q}, workerBeats{beats}
	o.Worker.Beat = natsstore.WorkerTTL / 3
	return nil
}

// workerBeats are the workers' heartbeats as the team takes them (team.Heartbeats).
type workerBeats struct{ w *natsstore.Workers }

func (b workerBeats) Hold(ctx context.Context, id string, info []byte) (hosts.Heartbeat, error) {
	l, err := b.w.Hold(ctx, id, info)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (b workerBeats) Watch(ctx context.Context) (<-chan hosts.WorkerChange, <-chan struct{}, error) {
	in, current, err := b.w.Watch(ctx)
	if err != nil {
		return nil, nil, err
	}
	// One goroutine passes both on, in order: current is closed here only
	// after every change given before it was passed on (out is unbuffered).
	out, cur := make(chan hosts.WorkerChange), make(chan struct{})
	go func() {
		defer close(out)
		for {
			select {
			case c, ok := <-in:
				if !ok {
					return
				}
				select {
				case out <- hosts.WorkerChange{ID: c.ID, Gone: c.Gone}:
				case <-ctx.Done():
				}
			case <-current:
				current = nil
				close(cur)
			}
		}
	}()
	return out, cur, nil
}

func (b workerBeats) Alive(ctx context.Context) (map[string][]byte, error) { return b.w.Alive(ctx) }

// spawnQueue is the team's work queue as the team takes it (team.SpawnQueue).
type spawnQueue struct{ q *natsstore.Queue }

func (s spawnQueue) Publish(ctx context.Context, id string, data []byte) error {
	return s.q.Publish(ctx, id, data)
}

func (s spawnQueue) Next(ctx context.Context) (hosts.QueueJob, error) {
	j, err := s.q.Next(ctx)
	if err != nil {
		return nil, err
	}
	return j, nil
}

// connectNATS dials spec's server within natsConnectTimeout, with the
// credentials and TLS files the environment names (natsconn.ConnectOptionsFromEnv);
// a server that does not answer, or refuses them, is one sentence;
// refused (may be nil) is told of each request refused for lack of
// permission.
func connectNATS(ctx context.Context, g *GlobalOptions, spec StoreSpec, refused func(error)) (*nats.Conn, error) {
	o, err := natsconn.ConnectOptionsFromEnv(g.Getenv)
	if err != nil {
		return nil, &exit.Error{Code: exit.Failure, Err: err}
	}
	if o.User == "" && o.NKeySeed == "" {
		if o, err = localCreds(g, spec, o); err != nil {
			return nil, &exit.Error{Code: exit.Failure, Err: err}
		}
	}
	o.Name, o.DialTimeout, o.Refused = "agentteam", natsConnectTimeout, refused
	nc, err := natsconn.Connect(ctx, spec.Server, o)
	if err != nil {
		return nil, &exit.Error{Code: exit.Failure, Err: err}
	}
	return nc, nil
}

// localCreds adds to o the credentials `agentteam serve` made in this
// user's state directory when spec's server is on this host. Never for a
// server elsewhere: one could relay the nkey's signature to this host's.
func localCreds(g *GlobalOptions, spec StoreSpec, o natsconn.ConnectOptions) (natsconn.ConnectOptions, error) {
	u, err := url.Parse(spec.Server)
	if err != nil || u.User != nil {
		return o, nil
	}
	for _, hp := range strings.Split(u.Host, ",") {
		if !onThisHost(hp) {
			return o, nil
		}
	}
	dir, err := natsconn.CredsDir(g.Getenv)
	if err != nil {
		return o, nil
	}
	path := natsconn.FindRoleCreds(dir, spec.Team, spec.Role)
	if path == "" {
		return o, nil
	}
	f, err := natsconn.ReadCredsFile(path)
	if err != nil {
		return o, err
	}
	o.User, o.Password, o.NKeySeed, o.CredsFrom, o.Found = f.User, f.Password, f.NKeySeed, f.CredsFrom, true
	return o, nil
}

// onThisHost reports whether HOST:PORT is this host: a loopback address,
// localhost, or the literal address of one of its interfaces (a name is
// not looked up: DNS may say anything).
func onThisHost(hostport string) bool {
	if Loopback(hostport) {
		return true
	}
	host, _, err := net.SplitHostPort(hostport)
	ip := net.ParseIP(host)
	if err != nil || ip == nil || ip.IsUnspecified() {
		return false
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// Events is the event log on these stores; sub (may be nil) sees each event.
func (s *Stores) Events(ws *workspace.Workspace, sub func(event.Event)) *event.EventLog {
	if s.Lines != nil {
		return event.NewEventLogTo(s.Lines, sub)
	}
	return event.NewEventLog(ws.EventsPath(), sub)
}

// Apply makes a team opened with o keep its state in these stores.
func (s *Stores) Apply(o *team.Options) {
	if !s.NATS {
		return
	}
	o.Mailbox, o.Registry, o.Board, o.EventLines = s.Mailbox, s.Registry, s.Board, s.Lines
	o.Owner, o.Sessions = s.Owner, s.Sessions
}

// natsSessions is natsstore.Sessions as the team's SessionStore.
type natsSessions struct{ *natsstore.Sessions }

func (s natsSessions) SessionLog(name string) loop.SessionLog { return s.Log(name) }

// Loopback reports whether HOST:PORT only takes connections from this host.
func Loopback(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
