package natsserver

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nkeys"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// DefaultListen is where `agentteam serve` listens for clients unless told.
const DefaultListen = "127.0.0.1:4222"

// readyTimeout bounds how long Start waits for the server to take clients.
const readyTimeout = 15 * time.Second

// ServerOptions say how to run the embedded server of `agentteam serve`.
type ServerOptions struct {
	// Listen is the clients' HOST:PORT; port 0 lets the system pick.
	Listen string
	// DataDir keeps JetStream's streams; it is created if missing.
	DataDir string
	// ServerName names this node in a cluster; "" lets NATS pick one.
	ServerName string
	// Cluster is the routes' HOST:PORT; "" runs a single node.
	Cluster     string
	ClusterName string
	// Routes are the other nodes' nats://HOST:PORT cluster addresses.
	Routes []string
	// Users are the teams' credentials; none means no credentials are asked
	// (fit for 127.0.0.1 only).
	Users []TeamUser
	// Owners are the public nkeys of users who reach every team: the
	// credentials serve makes for its own user when given no users file.
	// They share the global account with the clients of a server that
	// asks no credentials: its teams are the same either way.
	Owners []string
	// TLS, when Cert is set, makes clients connect over TLS; with CA also
	// set, clients and the other nodes must show a certificate signed by it.
	TLS TLSFiles
	// Warn receives one sentence for what goes wrong while serving (a
	// route peer unreachable, a JetStream error); nil drops them.
	Warn func(string)
}

// TLSFiles are PEM files: a certificate, its key and a CA.
type TLSFiles struct{ Cert, Key, CA string }

// TeamUser is one team's credentials: a user and password (the password
// may be a bcrypt hash), or the public key of an nkey.
type TeamUser struct {
	Team     string
	User     string
	Password string
	NKey     string
	// Role is what the user may do in its team (RolePermissions); "" is
	// the lead's, everything. Team natsconn.AnyTeam, with an nkey, is a
	// role in every team of the global account (serve's own credentials).
	Role natsconn.Role
}

// Server is a running embedded NATS server with JetStream.
type Server struct {
	ns   *server.Server
	log  *serverLog
	lock *flock.Flock
}

// Start runs an embedded NATS server with JetStream as o says and returns
// once it takes clients. Each way it can fail is one sentence: the port
// taken, the data directory unusable, a TLS file bad.
func Start(o ServerOptions) (*Server, error) {
	opts, err := serverOptions(o)
	if err != nil {
		return nil, err
	}
	if err := usableDir(o.DataDir); err != nil {
		return nil, err
	}
	// JetStream locks nothing: two servers on one directory would corrupt
	// each other's streams. The lock is held until Shutdown.
	lock := flock.New(filepath.Join(o.DataDir, "serve.lock"))
	if locked, err := lock.TryLock(); err != nil || !locked {
		if err == nil {
			err = errors.New("held by another process")
		}
		return nil, fmt.Errorf("the NATS data directory %s is in use by another agentteam serve (%v)", o.DataDir, err)
	}
	started := false
	defer func() {
		if !started {
			_ = lock.Unlock()
		}
	}()
	for _, hp := range []struct{ what, addr string }{{"listen", o.Listen}, {"cluster", o.Cluster}} {
		if err := portFree(hp.what, hp.addr); err != nil {
			return nil, err
		}
	}
	ns, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("NATS server: %w", err)
	}
	l := &serverLog{warn: o.Warn, fatal: make(chan string, 1), seen: map[string]bool{}}
	ns.SetLogger(l, false, false)
	go ns.Start()
	deadline := time.Now().Add(readyTimeout)
	for !ns.ReadyForConnections(100 * time.Millisecond) {
		select {
		case msg := <-l.fatal:
			ns.Shutdown()
			ns.WaitForShutdown()
			return nil, errors.New(fatalSentence(msg, o))
		default:
		}
		if time.Now().After(deadline) {
			ns.Shutdown()
			ns.WaitForShutdown()
			return nil, fmt.Errorf("NATS server: not ready for clients after %s", readyTimeout)
		}
	}
	started = true
	// However the server ends (Shutdown, or StartLocal's caller stopping
	// the NATS server itself), the directory is free again after it.
	go func() {
		ns.WaitForShutdown()
		_ = lock.Unlock()
	}()
	return &Server{ns: ns, log: l, lock: lock}, nil
}

// serverOptions turns o into NATS's options, checking each part.
func serverOptions(o ServerOptions) (*server.Options, error) {
	opts := &server.Options{}
	if len(o.Users) > 0 {
		accounts, err := accountsConfig(o.Users)
		if err != nil {
			return nil, err
		}
		if accounts != "" {
			if err := opts.ProcessConfigString(accounts); err != nil {
				return nil, fmt.Errorf("NATS accounts: %w", err)
			}
		}
		if err := addUsers(opts, o.Users); err != nil {
			return nil, err
		}
	}
	for _, pub := range o.Owners {
		if !nkeys.IsValidPublicUserKey(pub) {
			return nil, fmt.Errorf("%q is not an nkey user's public key (it starts with U)", pub)
		}
		opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: pub})
	}
	host, port, err := splitHostPort("listen", o.Listen)
	if err != nil {
		return nil, err
	}
	opts.Host, opts.Port = host, port
	if o.DataDir == "" {
		return nil, errors.New("the NATS data directory is not set")
	}
	opts.JetStream, opts.StoreDir = true, o.DataDir
	opts.ServerName = o.ServerName
	opts.NoLog, opts.NoSigs = true, true
	opts.MaxPayload = natsstore.MaxPayload
	if o.Cluster != "" {
		if opts.Cluster.Host, opts.Cluster.Port, err = splitHostPort("cluster", o.Cluster); err != nil {
			return nil, err
		}
		opts.Cluster.Name = o.ClusterName
		if opts.Cluster.Name == "" {
			opts.Cluster.Name = "agentteam"
		}
		if o.ServerName == "" {
			return nil, errors.New("a cluster node needs --server-name, unique in its cluster")
		}
		for _, r := range o.Routes {
			u, err := url.Parse(r)
			if err != nil || u.Scheme != "nats" || u.Host == "" || u.Port() == "" {
				return nil, fmt.Errorf("route %q is not nats://HOST:PORT", r)
			}
			opts.Routes = append(opts.Routes, u)
		}
	} else if len(o.Routes) > 0 || o.ClusterName != "" {
		return nil, errors.New("routes and a cluster name need --cluster HOST:PORT, where the other nodes reach this one")
	}
	if o.TLS.Cert != "" || o.TLS.Key != "" || o.TLS.CA != "" {
		cfg, err := serverTLS(o.TLS)
		if err != nil {
			return nil, err
		}
		opts.TLSConfig, opts.TLSTimeout = cfg, 5
		if o.TLS.CA != "" {
			opts.TLSVerify = true
			if o.Cluster != "" {
				// The other nodes prove who they are with a certificate of the CA.
				rc := cfg.Clone()
				rc.RootCAs = cfg.ClientCAs
				opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = rc, 5
			}
		}
	}
	return opts, nil
}

// accountsConfig is the NATS config declaring an account with JetStream
// for each team of users. Team names are checked tokens, safe to quote.
func accountsConfig(users []TeamUser) (string, error) {
	var b strings.Builder
	b.WriteString("accounts {\n")
	seen := map[string]bool{}
	for _, u := range users {
		if u.Team == natsconn.AnyTeam {
			continue
		}
		if err := natsstore.CheckTeamName(u.Team); err != nil {
			return "", err
		}
		if seen[u.Team] {
			continue
		}
		seen[u.Team] = true
		fmt.Fprintf(&b, "  %q: { jetstream: enabled }\n", natsconn.AccountName(u.Team))
	}
	b.WriteString("}\n")
	if len(seen) == 0 {
		return "", nil // every user is in the global account
	}
	return b.String(), nil
}

// addUsers puts each team's users in its team's account with its team's
// permissions.
func addUsers(opts *server.Options, users []TeamUser) error {
	byName := map[string]*server.Account{}
	for _, a := range opts.Accounts {
		byName[a.Name] = a
	}
	names := map[string]bool{}
	for _, u := range users {
		acc := byName[natsconn.AccountName(u.Team)]
		if u.Team == natsconn.AnyTeam {
			acc = nil // the global account, where every team is
		}
		if _, err := natsconn.ParseRole(string(u.Role)); err != nil {
			return fmt.Errorf("team %s: %w", u.Team, err)
		}
		perms := RolePermissions(u.Team, u.Role)
		switch {
		case u.NKey != "" && u.User == "":
			if !nkeys.IsValidPublicUserKey(u.NKey) {
				return fmt.Errorf("team %s: %q is not an nkey user's public key (it starts with U)", u.Team, u.NKey)
			}
			if names[u.NKey] {
				return fmt.Errorf("team %s: nkey %s is listed twice", u.Team, u.NKey)
			}
			names[u.NKey] = true
			opts.Nkeys = append(opts.Nkeys, &server.NkeyUser{Nkey: u.NKey, Account: acc, Permissions: perms})
		case u.User != "" && u.Password != "" && u.NKey == "":
			if names[u.User] {
				return fmt.Errorf("team %s: user %s is listed twice", u.Team, u.User)
			}
			names[u.User] = true
			opts.Users = append(opts.Users, &server.User{Username: u.User, Password: u.Password, Account: acc, Permissions: perms})
		default:
			return fmt.Errorf("team %s: a user needs a name and a password, or an nkey alone", u.Team)
		}
	}
	return nil
}

// splitHostPort reads HOST:PORT for what.
func splitHostPort(what, hp string) (string, int, error) {
	host, p, err := net.SplitHostPort(hp)
	if err != nil {
		return "", 0, fmt.Errorf("%s address %q is not HOST:PORT", what, hp)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%s address %q: the port is not a number from 0 to 65535", what, hp)
	}
	if host == "" {
		host = "0.0.0.0"
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}

// portFree says in one sentence that addr is taken, before NATS finds out
// in a log line; port 0 is always free.
func portFree(what, addr string) error {
	if addr == "" {
		return nil
	}
	if _, p, err := net.SplitHostPort(addr); err != nil || p == "0" {
		return nil
	}
	l, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("the %s address %s is taken by another program (another agentteam serve?)", what, addr)
	}
	if err != nil {
		return fmt.Errorf("cannot listen on %s address %s: %w", what, addr, err)
	}
	return l.Close()
}

// usableDir creates dir if needed and checks a file can be written there.
func usableDir(dir string) error {
	if dir == "" {
		return errors.New("the NATS data directory is not set")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("the NATS data directory %s is unusable: %w", dir, err)
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return fmt.Errorf("the NATS data directory %s is unusable: %w", dir, err)
	}
	probe.Close()
	return os.Remove(probe.Name())
}

// serverTLS loads the server's certificate and, with a CA, the pool its
// clients' certificates are checked against.
func serverTLS(f TLSFiles) (*tls.Config, error) {
	if f.Cert == "" || f.Key == "" {
		return nil, errors.New("TLS needs both --tls-cert and --tls-key")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s or key %s: %w", f.Cert, f.Key, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pool, err := natsconn.LoadCA(f.CA)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// fatalSentence turns the fatal log line of a server that could not start
// into one sentence.
func fatalSentence(msg string, o ServerOptions) string {
	switch {
	case strings.Contains(msg, "address already in use") && strings.Contains(msg, "router"):
		return fmt.Sprintf("the cluster address %s is taken by another program (another agentteam serve?)", o.Cluster)
	case strings.Contains(msg, "address already in use"):
		return fmt.Sprintf("the listen address %s is taken by another program (another agentteam serve?)", o.Listen)
	case strings.Contains(msg, "JetStream"), strings.Contains(msg, "storage directory"):
		return fmt.Sprintf("JetStream cannot use the data directory %s: %s", o.DataDir, msg)
	}
	return "NATS server: " + msg
}

// Shutdown stops the server and waits until it has; its data directory
// is free for another server once it returns.
func (s *Server) Shutdown() {
	s.ns.Shutdown()
	s.ns.WaitForShutdown()
	_ = s.lock.Unlock()
}

// ClientURL is the nats:// address clients connect to.
func (s *Server) ClientURL() string { return s.ns.ClientURL() }

// ClusterURL is the nats:// address other nodes route to; "" without a
// cluster.
func (s *Server) ClusterURL() string {
	a := s.ns.ClusterAddr()
	if a == nil {
		return ""
	}
	return "nats://" + a.String()
}

// NATS is the embedded server itself, for tests that look inside.
func (s *Server) NATS() *server.Server { return s.ns }

// serverLog is the embedded server's logger: its first fatal line ends
// Start, route failures become one warning per peer, other errors and
// warnings are passed on; notices, debug and trace are dropped.
type serverLog struct {
	warn  func(string)
	fatal chan string

	mu   sync.Mutex
	seen map[string]bool
}

func (l *serverLog) Fatalf(format string, v ...any) {
	select {
	case l.fatal <- fmt.Sprintf(format, v...):
	default:
	}
}

func (l *serverLog) Errorf(format string, v ...any) {
	msg := fmt.Sprintf(format, v...)
	if strings.Contains(msg, "connect to route") {
		// "Error trying to connect to route (attempt N): dial tcp HOST:PORT: ..."
		peer, cause := msg, msg
		if i := strings.Index(msg, "dial tcp "); i >= 0 {
			rest := msg[i+len("dial tcp "):]
			if j := strings.Index(rest, ": "); j >= 0 {
				peer, cause = rest[:j], rest[j+2:]
			}
		}
		l.once("route "+peer, fmt.Sprintf("route peer %s is unreachable (%s); serving on and trying again", peer, cause))
		return
	}
	l.say(msg)
}

func (l *serverLog) Warnf(format string, v ...any) { l.say(fmt.Sprintf(format, v...)) }
func (l *serverLog) Noticef(string, ...any)        {}
func (l *serverLog) Debugf(string, ...any)         {}
func (l *serverLog) Tracef(string, ...any)         {}

// once says msg the first time key is seen.
func (l *serverLog) once(key, msg string) {
	l.mu.Lock()
	seen := l.seen[key]
	l.seen[key] = true
	l.mu.Unlock()
	if !seen {
		l.say(msg)
	}
}

func (l *serverLog) say(msg string) {
	if l.warn != nil {
		l.warn(msg)
	}
}

// DataDirIn is the default data directory of a workspace's server.
func DataDirIn(stateDir string) string { return filepath.Join(stateDir, "nats") }
