package cmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/permask"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/internal/testutil/testpki"
)

// securedServe is `agentteam serve --users FILE` with team alpha's lead
// alice (a password), its worker (an nkey) and its person carol (a
// password), and team beta's bob; each user's credentials file as README
// hands them out (mode 0600).
type securedServe struct {
	*server
	alice, nkey, person, bob string
}

func startSecuredServe(t *testing.T, args ...string) securedServe {
	t.Helper()
	dir := t.TempDir()
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	users := file("users", "alpha alice alpha-secret\nalpha "+pub+" role=worker\nalpha carol carol-secret role=person\nbeta bob beta-secret\n")
	s := securedServe{
		alice:  file("alice.creds", "alice alpha-secret\n"),
		nkey:   file("alpha.nk", string(seed)+"\n"),
		person: file("carol.creds", "carol carol-secret\n"),
		bob:    file("bob.creds", "bob beta-secret\n"),
	}
	s.server = startServe(t, dir, nil, append([]string{"--listen", "127.0.0.1:0", "--users", users, "--data", t.TempDir()}, args...)...)
	// A TLS server says tls://; a store URL is nats:// all the same.
	s.url = strings.Replace(s.url, "tls://", "nats://", 1)
	return s
}

// connect is a client of the server with creds's credentials and env's TLS files.
func (s securedServe) connect(t *testing.T, creds string, env ...string) *nats.Conn {
	t.Helper()
	vars := map[string]string{natsconn.EnvCreds: creds}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	o, err := natsconn.ConnectOptionsFromEnv(func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	nc, err := natsconn.Connect(context.Background(), s.url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// quick runs the binary and checks it ended within a few seconds.
func quick(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	start := time.Now()
	r := runBin(t, dir, env, "", args...)
	if took := time.Since(start); took > 10*time.Second {
		t.Fatalf("agentteam %v took %s; stderr:\n%s", args, took.Round(time.Millisecond), r.stderr)
	}
	return r
}

// Every command in its normal scenario against `serve --users`, each
// given its role's credentials of team alpha the ways README says (the
// lead's password in the environment or a credentials file, the worker's
// nkey seed in one, the person's file): the five commands of a team
// across two machines, then team, inbox, send, tasks, sessions, an ask
// approved and one denied with requests, approve and deny, and a chat in
// lines.
func TestEveryCommandWorksAgainstServeWithUsers(t *testing.T) {
	s := startSecuredServe(t)
	everyCommandWorks(t, s, s.url+"/alpha", nil)
}

// everyCommandWorks runs every command's normal scenario on team alpha
// of s at store, each with tlsEnv (the TLS files) besides its credentials.
func everyCommandWorks(t *testing.T, s securedServe, store string, tlsEnv []string) {
	t.Helper()
	bare, lead, worker := teamClones(t)
	srv := fakellm.New(remoteScript([]string{"alice"}, nil, ""), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	withCreds := func(creds string, env []string) []string {
		return append(append(append([]string{"AGENTTEAM_STORE=" + store}, env...), tlsEnv...), natsconn.EnvCreds+"="+creds)
	}
	password := append(append(fakeEnv(srv), tlsEnv...), "AGENTTEAM_STORE="+store, natsconn.EnvUser+"=alice", natsconn.EnvPassword+"=alpha-secret")
	file := withCreds(s.person, nil)

	nt := natsTeam{url: store, nc: s.connect(t, s.alice, tlsEnv...), team: "alpha"}
	_, waitWorker, workerPID := startWorkerIn(t, nt, worker, withCreds(s.nkey, fakeEnv(srv)), "worker", "--labels", "b", "--isolation", "worktree")
	r := runBin(t, lead, password, "", "run", `have a teammate with labels ["b"] write alice.txt`)
	mustSucceed(t, r, "run")
	if got := strings.TrimSpace(gitIn(t, bare, "rev-parse", "refs/heads/agentteam/alice")); got == "" {
		t.Fatal("the worker pushed no branch")
	}
	if members := teamJSON(t, t.TempDir(), file); len(members) != 1 || members[0].Name != "alice" {
		t.Fatalf("team --json: %+v", members)
	}
	d := quick(t, lead, file, "diff", "alice")
	mustSucceed(t, d, "diff")
	if !strings.Contains(d.stdout, "+by alice on the worker") {
		t.Fatalf("diff alice:\n%s", d.stdout)
	}
	mustSucceed(t, quick(t, lead, file, "merge", "alice"), "merge")
	if data, err := os.ReadFile(filepath.Join(lead, "alice.txt")); err != nil || string(data) != "by alice on the worker\n" {
		t.Fatalf("alice.txt after the merge: %q, %v", data, err)
	}
	stopWorker(t, waitWorker, workerPID)

	elsewhere := t.TempDir()
	mustSucceed(t, quick(t, elsewhere, file, "send", "--to", "alice", "from the person"), "send")
	in := quick(t, elsewhere, file, "inbox", "alice")
	mustSucceed(t, in, "inbox")
	if !strings.Contains(in.stdout, "from the person") {
		t.Fatalf("inbox alice:\n%s", in.stdout)
	}
	mustSucceed(t, quick(t, elsewhere, file, "tasks"), "tasks")
	if ss := quick(t, lead, file, "sessions"); ss.code != 0 || !strings.Contains(ss.stdout, "current") {
		t.Fatalf("sessions: exit %d\n%s%s", ss.code, ss.stdout, ss.stderr)
	}

	// An ask approved, the next denied, from another directory.
	asks := fakellm.New(permLeadScript(
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo one > one.txt"}`)}},
		fakellm.Reply{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"echo two > two.txt"}`)}},
		fakellm.Reply{Content: "done"},
	), fakellm.WithAPIKey("test-key"))
	defer asks.Close()
	ws := t.TempDir()
	wait := startBin(t, ws, withCreds(s.alice, fakeEnv(asks)), "run", "--permission-mode", "auto-edit", "--permission-delegate", "user", "make it")
	first := waitForAsk(t, elsewhere, file)
	mustSucceed(t, quick(t, elsewhere, file, "approve", first.RequestID), "approve")
	var second permask.Ask
	testkit.Eventually(t, time.Minute, "a second ask", func() bool {
		a := requestsJSON(t, elsewhere, file)
		ok := len(a) > 0 && a[0].RequestID != first.RequestID
		if ok {
			second = a[0]
		}
		return ok
	})
	mustSucceed(t, quick(t, elsewhere, file, "deny", second.RequestID, "not now"), "deny")
	mustSucceed(t, wait(), "run with asks")
	if _, err := os.Stat(filepath.Join(ws, "one.txt")); err != nil {
		t.Errorf("the approved command did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "two.txt")); err == nil {
		t.Error("the denied command ran")
	}

	c := runBin(t, t.TempDir(), withCreds(s.alice, nil), "spawn carol as programmer\nlist team\n", "chat", "--demo")
	mustSucceed(t, c, "chat in lines")
	if !strings.Contains(c.stdout, "- spawn carol as programmer: done") {
		t.Fatalf("chat in lines:\n%s", c.stdout)
	}
}

// Team beta's credentials do not reach team alpha: through the binary
// each command says so in one sentence within seconds, and asked
// directly, the server gives beta none of alpha's inbox, registry or
// sessions.
func TestOneTeamsCredentialsCannotReadAnothersTeam(t *testing.T) {
	s := startSecuredServe(t)
	store := s.url + "/alpha"
	alpha := []string{"AGENTTEAM_STORE=" + store, natsconn.EnvCreds + "=" + s.alice}
	mustSucceed(t, quick(t, t.TempDir(), alpha, "send", "--to", "lead", "alpha's secret"), "send as alpha")

	beta := []string{"AGENTTEAM_STORE=" + store, natsconn.EnvCreds + "=" + s.bob}
	for _, args := range [][]string{{"inbox", "lead"}, {"team"}, {"send", "--to", "lead", "hi"}, {"requests"}} {
		r := quick(t, t.TempDir(), beta, args...)
		if r.code != exit.Failure || !strings.Contains(r.stderr, "are team beta's: they do not reach team alpha") ||
			strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || strings.Contains(r.stdout, "secret") {
			t.Errorf("%v with beta's credentials: exit %d\nstdout %s\nstderr %s", args, r.code, r.stdout, r.stderr)
		}
	}

	nc := s.connect(t, s.bob)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := natsstore.OpenMailbox(ctx, nc, "alpha"); err == nil {
		t.Error("beta opened alpha's inboxes")
	}
	if _, err := natsstore.OpenEntries(ctx, nc, "alpha", "registry", func(string, []byte) any { return nil }); err == nil {
		t.Error("beta opened alpha's registry")
	}
	if _, err := natsstore.OpenSessions(ctx, nc, "alpha"); err == nil {
		t.Error("beta opened alpha's sessions")
	}
	if m, err := nc.Request("$JS.API.DIRECT.GET."+natsstore.StreamName("alpha")+"."+natsstore.Subject("alpha", "lead"), nil, time.Second); err == nil {
		t.Errorf("beta read alpha's inbox directly: %s", m.Data)
	}
}

// With TLS and a CA, every client shows a certificate it signed: run and
// team work with the CA, the client's certificate and alice's
// credentials; without the client's certificate the connection is refused
// in one sentence within seconds.
func TestServeWithUsersAndTLSTakesCommands(t *testing.T) {
	pki := testpki.New(t)
	s := startSecuredServe(t, "--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey, "--tls-ca", pki.CA)
	tlsEnv := []string{"AGENTTEAM_STORE=" + s.url + "/alpha", natsconn.EnvCreds + "=" + s.alice, natsconn.EnvCA + "=" + pki.CA}
	full := append(append([]string{}, tlsEnv...), natsconn.EnvCert+"="+pki.ClientCert, natsconn.EnvKey+"="+pki.ClientKey)
	ws := t.TempDir()
	mustSucceed(t, runBin(t, ws, full, "", "run", "--demo", "spawn bob as writer to write hi"), "run over TLS")
	if members := teamJSON(t, t.TempDir(), full); len(members) != 1 || members[0].Name != "bob" {
		t.Fatalf("team --json over TLS: %+v", members)
	}
	r := quick(t, t.TempDir(), tlsEnv, "team")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "TLS with the NATS server") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("team without a client certificate: exit %d\n%s", r.code, r.stderr)
	}
}

// On a NATS server not agentteam's, whose user may not use JetStream's
// API, every command says the server's refusal in one sentence within
// seconds, not after the open's bound (30 s) of requests that only time
// out.
func TestAUserWithoutPermissionsIsRefusedAtOnce(t *testing.T) {
	ns, err := natsserver.NewServer(&natsserver.Options{
		Host: "127.0.0.1", Port: natsserver.RANDOM_PORT, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true,
		Users: []*natsserver.User{{Username: "limited", Password: "pw", Permissions: &natsserver.Permissions{
			Publish:   &natsserver.SubjectPermission{Allow: []string{"agentteam.alpha.>"}},
			Subscribe: &natsserver.SubjectPermission{Allow: []string{"_INBOX.>"}},
		}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	go ns.Start()
	t.Cleanup(func() { ns.Shutdown(); ns.WaitForShutdown() })
	if !ns.ReadyForConnections(30 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	env := []string{"AGENTTEAM_STORE=" + ns.ClientURL() + "/alpha", natsconn.EnvUser + "=limited", natsconn.EnvPassword + "=pw"}
	for _, args := range [][]string{{"team"}, {"send", "--to", "lead", "hi"}, {"inbox", "lead"}} {
		r := quick(t, t.TempDir(), env, args...)
		if r.code != exit.Failure || !strings.Contains(r.stderr, "these credentials may not reach it") ||
			!strings.Contains(r.stderr, "Permissions Violation for Publish") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d\n%s", args, r.code, r.stderr)
		}
	}
}
