package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// ServeOptions are the inputs of `agentteam serve`.
type ServeOptions struct {
	*launch.GlobalOptions
	IO IOStreams

	Listen string
	// Data is JetStream's directory; "" is .agentteam/nats in the workspace.
	Data        string
	Cluster     string
	Routes      []string
	ClusterName string
	ServerName  string
	// Users is the teams' credentials file (never the config file).
	Users                  string
	TLSCert, TLSKey, TLSCA string
	// Teams get a credential each, in an account of their own; none: one
	// credential reaches every team.
	Teams []string
	// Insecure serves without the credentials serve makes, and beyond
	// this host without TLS.
	Insecure bool
}

// newServeCmd builds `agentteam serve`; runF, when not nil, replaces runServe.
func newServeCmd(g *launch.GlobalOptions, io IOStreams, runF func(*ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{GlobalOptions: g, IO: io}
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run a NATS server with JetStream that teams on other hosts share",
		Long: `Run an embedded NATS server with JetStream, the store teammates on several hosts share.
It runs until interrupted (Ctrl-C, SIGTERM).

Clients need credentials. Unless given --users, serve makes them at its first start in its user's
state directory ($XDG_STATE_HOME/agentteam, else ~/.local/state/agentteam; 0700, files 0600): nkey
seeds that reach every team, or with --team NAME (repeatable) each team alone, in a NATS account of
its own; one per role. The lead's (run, chat) is nats.creds or nats-NAME.creds; a worker's,
nats.worker.creds or nats-NAME.worker.creds, sends only as its teammates; a person's commands',
nats.person.creds or nats-NAME.person.creds, only as user; neither queues a spawn nor takes the
team's owner lease. agentteam finds them there when its server is on this host, each command its
role's; on another host, copy the file of its role (a worker host the worker's; chmod 600) and set
AGENTTEAM_NATS_CREDS.

The users file has one user a line: "TEAM USER PASSWORD" or "TEAM NKEY" (a public nkey, U...),
either followed by role=worker or role=person (none is the lead's, all a team may do), and may be
read by its owner only (chmod 600). Clients give theirs in AGENTTEAM_NATS_CREDS (a file
holding "USER PASSWORD" or an nkey seed) or AGENTTEAM_NATS_USER and AGENTTEAM_NATS_PASSWORD.

Beyond 127.0.0.1, serve asks for TLS (--tls-cert, --tls-key); --insecure serves without it, and
without the credentials serve makes (anyone who reaches the port then reaches every team).`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runServe(c.Context(), opts)
		},
	}
	f := c.Flags()
	f.StringVar(&opts.Listen, "listen", natsserver.DefaultListen, "HOST:PORT clients connect to")
	f.StringVar(&opts.Data, "data", "", "JetStream's directory (default .agentteam/nats in the workspace)")
	f.StringVar(&opts.Cluster, "cluster", "", "HOST:PORT the other nodes of a cluster route to")
	f.StringSliceVar(&opts.Routes, "routes", nil, "the other nodes' cluster addresses, nats://HOST:PORT,...")
	f.StringVar(&opts.ClusterName, "cluster-name", "", "the cluster's name, the same on every node (default agentteam)")
	f.StringVar(&opts.ServerName, "server-name", "", "this node's name, unique in its cluster")
	f.StringVar(&opts.Users, "users", envOr(g.Getenv, "AGENTTEAM_NATS_USERS", ""), "the teams' credentials file (env AGENTTEAM_NATS_USERS)")
	f.StringVar(&opts.TLSCert, "tls-cert", "", "PEM certificate: clients connect over TLS")
	f.StringVar(&opts.TLSKey, "tls-key", "", "PEM key of --tls-cert")
	f.StringVar(&opts.TLSCA, "tls-ca", "", "PEM CA: clients and cluster nodes must show a certificate it signed")
	f.StringSliceVar(&opts.Teams, "team", nil, "make credentials for team NAME alone, an account of its own (repeatable; default: one for every team)")
	f.BoolVar(&opts.Insecure, "insecure", false, "serve without the credentials serve makes, and beyond this host without TLS")
	return c
}

func runServe(ctx context.Context, opts *ServeOptions) error {
	if err := checkServeSafety(opts); err != nil {
		return err
	}
	so := natsserver.ServerOptions{
		Listen: opts.Listen, DataDir: opts.Data,
		Cluster: opts.Cluster, Routes: opts.Routes, ClusterName: opts.ClusterName, ServerName: opts.ServerName,
		TLS: natsserver.TLSFiles{Cert: opts.TLSCert, Key: opts.TLSKey, CA: opts.TLSCA},
	}
	if so.DataDir == "" {
		dir, err := defaultDataDir(opts.GlobalOptions)
		if err != nil {
			return err
		}
		so.DataDir = dir
	}
	if opts.Users != "" {
		users, err := natsserver.ReadUsersFile(opts.Users)
		if err != nil {
			return &exit.Error{Code: exit.Failure, Err: err}
		}
		so.Users = users
	}
	var made []madeCreds
	if opts.Users == "" && !opts.Insecure {
		var err error
		if made, err = makeServeCreds(opts, &so); err != nil {
			return &exit.Error{Code: exit.Failure, Err: err}
		}
	}
	var mu sync.Mutex
	say := func(format string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(opts.IO.Err, "agentteam serve: "+format+"\n", a...)
	}
	so.Warn = func(w string) { say("warning: %s", w) }
	s, err := natsserver.Start(so)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	defer s.Shutdown()
	what := []string{"data " + so.DataDir}
	switch {
	case len(so.Users) > 0 && len(made) == 0:
		teams := map[string]bool{}
		for _, u := range so.Users {
			teams[u.Team] = true
		}
		what = append(what, fmt.Sprintf("credentials of %d user(s) in %d team(s)", len(so.Users), len(teams)))
	case len(made) > 0:
		what = append(what, "credentials made by serve")
	default:
		what = append(what, "no credentials")
	}
	if so.TLS.Cert != "" {
		what = append(what, "TLS")
	}
	if u := s.ClusterURL(); u != "" {
		what = append(what, "cluster "+u)
	}
	say("listening on %s (%s)", s.ClientURL(), strings.Join(what, ", "))
	for _, m := range made {
		say("credentials of %s for %s: %s", m.teams, roleUse[m.role], m.path)
	}
	if len(made) > 0 {
		ca := ""
		if so.TLS.Cert != "" {
			ca = ", and AGENTTEAM_NATS_CA to the CA of its certificate"
		}
		say("agentteam on this host, as this user, finds them; on another host, copy the file of its role there (chmod 600: a worker host the worker's) and set %s to it%s",
			natsconn.EnvCreds, ca)
		if so.Cluster != "" {
			say("every node of a cluster must take the same credentials: copy the file to the same place on the other nodes before they first start")
		}
	}
	if len(so.Users) == 0 && len(so.Owners) == 0 {
		who := "any user of this host"
		if !launch.Loopback(opts.Listen) {
			who = "anyone who reaches it"
		}
		say("warning: %s asks no credentials (--insecure): %s reads and writes every team", opts.Listen, who)
	}
	if !launch.Loopback(opts.Listen) && so.TLS.Cert == "" {
		say("warning: %s is reachable from other hosts without TLS: credentials and messages cross the network in clear text", opts.Listen)
	}
	<-ctx.Done()
	say("stopping")
	return nil
}

// roleUse says whose a role's credentials are.
var roleUse = map[natsconn.Role]string{
	natsconn.RoleLead:   "the lead (run, chat)",
	natsconn.RoleWorker: "workers (agentteam worker)",
	natsconn.RolePerson: "a person's commands (send, approve, deny, inbox…)",
}

// checkServeSafety refuses, before anything starts, a serve reachable
// from other hosts without TLS unless --insecure says so, and --team
// with --users (the file already names the teams).
func checkServeSafety(opts *ServeOptions) error {
	if len(opts.Teams) > 0 && opts.Users != "" {
		return exit.Usagef("--team makes credentials and --users gives them: use one")
	}
	if len(opts.Teams) > 0 && opts.Insecure {
		return exit.Usagef("--team makes credentials and --insecure serves without them: use one")
	}
	if !launch.Loopback(opts.Listen) && opts.TLSCert == "" && !opts.Insecure {
		return &exit.Error{Code: exit.Failure, Err: fmt.Errorf(
			"%s is reachable from other hosts: give --tls-cert and --tls-key, so credentials and messages do not cross the network in clear text (--insecure serves without TLS)",
			opts.Listen)}
	}
	return nil
}

// madeCreds is a credentials file serve made (or found made), whom it
// lets in and as what.
type madeCreds struct {
	teams, path string
	role        natsconn.Role
}

// makeServeCreds makes, once per user, the credentials of so's clients in
// the state directory, one per role: for every team, or for each --team.
func makeServeCreds(opts *ServeOptions, so *natsserver.ServerOptions) ([]madeCreds, error) {
	dir, err := natsconn.CredsDir(opts.Getenv)
	if err != nil {
		return nil, fmt.Errorf("%w (or give --users FILE)", err)
	}
	teams := opts.Teams
	if len(teams) == 0 {
		teams = []string{""}
	}
	var made []madeCreds
	for _, team := range teams {
		who := "every team"
		if team != "" {
			if err := natsstore.CheckTeamName(team); err != nil {
				return nil, fmt.Errorf("--team %q: %w", team, err)
			}
			who = "team " + team
		}
		for _, role := range natsconn.Roles {
			path := natsconn.RoleCredsFile(dir, team, role)
			pub, err := natsserver.MakeCreds(path)
			if err != nil {
				return nil, err
			}
			switch {
			case team == "" && role == natsconn.RoleLead:
				so.Owners = append(so.Owners, pub)
			case team == "":
				so.Users = append(so.Users, natsserver.TeamUser{Team: natsconn.AnyTeam, NKey: pub, Role: role})
			default:
				so.Users = append(so.Users, natsserver.TeamUser{Team: team, NKey: pub, Role: role})
			}
			made = append(made, madeCreds{who, path, role})
		}
	}
	return made, nil
}

// defaultDataDir is .agentteam/nats in the workspace, created if missing
// and refused if it (or .agentteam/) is a link.
func defaultDataDir(g *launch.GlobalOptions) (string, error) {
	ws, err := launch.OpenWorkspace(g)
	if err != nil {
		return "", err
	}
	if err := ws.Init(); err != nil {
		return "", &exit.Error{Code: exit.Failure, Err: err}
	}
	dir := filepath.Join(ws.StatePath(), "nats")
	err = os.Mkdir(dir, 0o700)
	if errors.Is(err, fs.ErrExist) {
		fi, lerr := os.Lstat(dir)
		switch {
		case lerr != nil:
			err = lerr
		case fi.Mode()&fs.ModeSymlink != 0:
			err = fmt.Errorf("%s is a symbolic link; agentteam keeps its state only in real directories: remove it", dir)
		default:
			err = nil
		}
	}
	if err != nil {
		return "", &exit.Error{Code: exit.Failure, Err: err}
	}
	return dir, nil
}
