package natsserver_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/internal/testutil/testpki"
)

// start runs a server with o on 127.0.0.1 and a random port unless o says
// otherwise, stopped when t ends.
func start(t *testing.T, o natsserver.ServerOptions) *natsserver.Server {
	t.Helper()
	if o.Listen == "" {
		o.Listen = "127.0.0.1:0"
	}
	if o.DataDir == "" {
		o.DataDir = t.TempDir()
	}
	s, err := natsserver.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connect(t testing.TB, url string, o natsconn.ConnectOptions) *nats.Conn {
	t.Helper()
	nc, err := natsconn.Connect(context.Background(), url, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// The attack: team A's user, knowing team B's names, tries to read B's
// inbox subject, B's stream and B's KV bucket. Each is refused with
// "permissions violation", and B's messages never reach A.
func TestOneTeamsCredentialsCannotReadAnotherTeam(t *testing.T) {
	testkit.SkipShort(t)
	s := start(t, natsserver.ServerOptions{Users: []natsserver.TeamUser{
		{Team: "alpha", User: "alice", Password: "alpha-secret"},
		{Team: "beta", User: "bob", Password: "beta-secret"},
	}})
	url := s.ClientURL()

	// B works as usual: its inbox holds a secret.
	ncB := connect(t, url, natsconn.ConnectOptions{User: "bob", Password: "beta-secret"})
	mbB, err := natsstore.OpenMailbox(context.Background(), ncB, "beta")
	if err != nil {
		t.Fatalf("team beta opens its own inboxes: %v", err)
	}
	if _, err := mbB.Append(t.Context(), "lead", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "beta's secret"}); err != nil {
		t.Fatal(err)
	}
	if _, err := natsstore.OpenDoc[counterDoc](context.Background(), ncB, "beta", "config"); err != nil {
		t.Fatalf("team beta opens its own document: %v", err)
	}

	// A works in its own team.
	var v testkit.Errors
	ncA, err := nats.Connect(url, nats.UserInfo("alice", "alpha-secret"), nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { v.Add(err) }))
	if err != nil {
		t.Fatal(err)
	}
	defer ncA.Close()
	mbA, err := natsstore.OpenMailbox(context.Background(), ncA, "alpha")
	if err != nil {
		t.Fatalf("team alpha opens its own inboxes: %v", err)
	}
	if _, err := mbA.Append(t.Context(), "lead", inbox.Message{Type: inbox.TypeMessage, From: "al", Content: "mine"}); err != nil {
		t.Fatal(err)
	}

	// Subscribing to B's inbox subject (and to everything) is refused.
	got := make(chan *nats.Msg, 8)
	for _, subj := range []string{natsstore.Subject("beta", "lead"), "agentteam.beta.>", ">"} {
		if _, err := ncA.ChanSubscribe(subj, got); err != nil {
			t.Fatal(err)
		}
		v.WaitFor(t, `permissions violation for subscription to "`+subj+`"`)
	}
	// B's stream, its messages and its KV bucket are refused.
	js, err := jetstream.New(ncA)
	if err != nil {
		t.Fatal(err)
	}
	// A refused request gets no answer: each try waits 2s at most.
	try := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	if _, err := js.Stream(try(), natsstore.StreamName("beta")); err == nil {
		t.Fatal("team alpha's user reached beta's stream")
	}
	v.WaitFor(t, `permissions violation for publish to "$JS.API.STREAM.INFO.agentteam_beta"`)
	// Opening looks the stream up first, with or without ?replicas: refused.
	v.Reset()
	if _, err := natsstore.OpenMailbox(try(), ncA, "beta"); err == nil {
		t.Fatal("team alpha's user opened beta's inboxes")
	}
	v.WaitFor(t, `permissions violation for publish to "$JS.API.STREAM.INFO.agentteam_beta"`)
	v.Reset()
	if _, err := natsstore.OpenMailbox(try(), ncA, "beta", natsstore.Replicas(1)); err == nil {
		t.Fatal("team alpha's user opened beta's inboxes")
	}
	v.WaitFor(t, `permissions violation for publish to "$JS.API.STREAM.INFO.agentteam_beta"`)
	// Changing it outright is refused too.
	v.Reset()
	if _, err := js.UpdateStream(try(), jetstream.StreamConfig{Name: natsstore.StreamName("beta"),
		Subjects: []string{"agentteam.beta.inbox.*"}, MaxMsgs: 1}); err == nil {
		t.Fatal("team alpha's user changed beta's stream")
	}
	v.WaitFor(t, `permissions violation for publish to "$JS.API.STREAM.UPDATE.agentteam_beta"`)
	if _, err := js.CreateStream(try(), jetstream.StreamConfig{Name: natsstore.StreamName("beta") + "_copy",
		Sources: []*jetstream.StreamSource{{Name: natsstore.StreamName("beta")}}}); err == nil {
		t.Fatal("team alpha's user created a stream sourcing beta's")
	}
	v.WaitFor(t, `permissions violation for publish to "$JS.API.STREAM.CREATE.agentteam_beta_copy"`)
	if _, err := natsstore.OpenDoc[counterDoc](try(), ncA, "beta", "config"); err == nil {
		t.Fatal("team alpha's user opened beta's document")
	}
	v.WaitFor(t, `KV_agentteam_beta"`)
	if _, err := ncA.Request("$JS.API.DIRECT.GET.agentteam_beta.agentteam.beta.inbox.lead", nil, time.Second); err == nil {
		t.Fatal("team alpha's user read beta's last message")
	}
	v.WaitFor(t, `permissions violation for publish to "$JS.API.DIRECT.GET.agentteam_beta.`)
	// Asking the JetStream API for the list of streams is refused too.
	if _, err := ncA.Request("$JS.API.STREAM.NAMES", nil, time.Second); err == nil {
		t.Fatal("team alpha's user listed the streams")
	}
	v.WaitFor(t, `permissions violation for publish to "$JS.API.STREAM.NAMES"`)

	// B sends again: nothing reaches A's refused subscriptions.
	if _, err := mbB.Append(t.Context(), "lead", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "beta's second secret"}); err != nil {
		t.Fatal(err)
	}
	if err := ncA.Flush(); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		t.Fatalf("team alpha's user received %q on %s", m.Data, m.Subject)
	default:
	}
}

// An account per team: even a stream team A may create (its own name)
// catching B's subjects, or mirroring B's stream, sees nothing of B.
func TestAStreamOfOneTeamCannotCaptureAnother(t *testing.T) {
	testkit.SkipShort(t)
	s := start(t, natsserver.ServerOptions{Users: []natsserver.TeamUser{
		{Team: "alpha", User: "alice", Password: "alpha-secret"},
		{Team: "beta", User: "bob", Password: "beta-secret"},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ncB := connect(t, s.ClientURL(), natsconn.ConnectOptions{User: "bob", Password: "beta-secret"})
	mbB, err := natsstore.OpenMailbox(ctx, ncB, "beta")
	if err != nil {
		t.Fatal(err)
	}
	ncA := connect(t, s.ClientURL(), natsconn.ConnectOptions{User: "alice", Password: "alpha-secret"})
	jsA, err := jetstream.New(ncA)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mbB.Append(ctx, "lead", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "beta's first secret"}); err != nil {
		t.Fatal(err)
	}
	// The mirror of B's stream, under A's own stream name: in A's account
	// there is no such stream, so it stays empty (in one shared account it
	// would copy B's message within milliseconds; 2s is the bound looked at).
	mirror, err := jsA.CreateStream(ctx, jetstream.StreamConfig{Name: natsstore.StreamName("alpha"),
		Mirror: &jetstream.StreamSource{Name: natsstore.StreamName("beta")}})
	if err == nil {
		for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			mi, err := mirror.Info(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if mi.State.Msgs > 0 {
				t.Fatalf("team alpha's mirror copied %d of beta's messages", mi.State.Msgs)
			}
		}
		if err := jsA.DeleteStream(ctx, natsstore.StreamName("alpha")); err != nil {
			t.Fatal(err)
		}
	}
	// The catch-all: A's own stream on B's subjects (in one shared account
	// it would overlap B's stream and be refused; here it is A's alone).
	st, err := jsA.CreateStream(ctx, jetstream.StreamConfig{Name: natsstore.StreamName("alpha"), Subjects: []string{"agentteam.beta.>"}})
	if err != nil {
		t.Fatalf("team alpha creates its own stream: %v", err)
	}
	if _, err := mbB.Append(ctx, "lead", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "beta's secret"}); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
	defer cancelShort()
	if _, err := jsA.Publish(short, "agentteam.beta.inbox.lead", []byte("alpha's own")); err == nil {
		t.Fatal("team alpha may publish on beta's subjects")
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 0 {
		t.Fatalf("team alpha's stream caught %d of beta's messages", info.State.Msgs)
	}
}

// Credentials: a wrong password is refused with a sentence naming the
// credentials, none at all with one naming the variables; an nkey seed in a
// creds file logs in; a creds file others may read is refused.
func TestCredentialsAreCheckedWithASentence(t *testing.T) {
	kp, err := nkeys.CreateUser()
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	seed, _ := kp.Seed()
	s := start(t, natsserver.ServerOptions{Users: []natsserver.TeamUser{
		{Team: "alpha", User: "alice", Password: "alpha-secret"},
		{Team: "beta", NKey: pub},
	}})
	url := s.ClientURL()

	_, err = natsconn.Connect(context.Background(), url, natsconn.ConnectOptions{User: "alice", Password: "wrong", CredsFrom: "user alice of AGENTTEAM_NATS_USER"})
	if err == nil || !strings.Contains(err.Error(), "refused user alice of AGENTTEAM_NATS_USER") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong password: %v", err)
	}
	_, err = natsconn.Connect(context.Background(), url, natsconn.ConnectOptions{})
	if err == nil || !strings.Contains(err.Error(), "asks for credentials: set AGENTTEAM_NATS_CREDS") {
		t.Fatalf("no credentials: %v", err)
	}

	dir := t.TempDir()
	creds := filepath.Join(dir, "beta.creds")
	if err := os.WriteFile(creds, append([]byte("# team beta\n"), seed...), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{natsconn.EnvCreds: creds}
	o, err := natsconn.ConnectOptionsFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	nc := connect(t, url, o)
	if _, err := natsstore.OpenMailbox(context.Background(), nc, "beta"); err != nil {
		t.Fatalf("the nkey user of beta opens beta's inboxes: %v", err)
	}

	if err := os.Chmod(creds, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := natsconn.ConnectOptionsFromEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a creds file others may read: %v", err)
	}
	for _, e := range []map[string]string{
		{natsconn.EnvUser: "alice"},
		{natsconn.EnvCreds: creds, natsconn.EnvUser: "alice", natsconn.EnvPassword: "x"},
	} {
		if _, err := natsconn.ConnectOptionsFromEnv(func(k string) string { return e[k] }); err == nil {
			t.Errorf("%v: no error", e)
		}
	}
}

// No server at the address: one sentence within the dial timeout.
func TestConnectToNobodySaysSo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = natsconn.Connect(context.Background(), "nats://"+addr, natsconn.ConnectOptions{DialTimeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the NATS server at nats://"+addr) {
		t.Fatalf("err = %v", err)
	}
}

// TLS with a CA made here: a client that trusts it and shows its own
// certificate works; one trusting another CA, or showing no certificate,
// or speaking plain NATS, is refused with a sentence.
func TestTLSWithATestCA(t *testing.T) {
	p := testpki.New(t)
	s := start(t, natsserver.ServerOptions{TLS: natsserver.TLSFiles{Cert: p.ServerCert, Key: p.ServerKey, CA: p.CA}})
	url := s.ClientURL()

	nc := connect(t, url, natsconn.ConnectOptions{CA: p.CA, Cert: p.ClientCert, Key: p.ClientKey})
	if !strings.HasPrefix(nc.ConnectedUrl(), "tls://") && nc.TLSRequired() == false {
		t.Fatalf("connected without TLS to %s", nc.ConnectedUrl())
	}
	if _, err := nc.TLSConnectionState(); err != nil {
		t.Fatalf("no TLS state: %v", err)
	}
	mb, err := natsstore.OpenMailbox(context.Background(), nc, "tls")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mb.Append(t.Context(), "lead", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "over TLS"}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		o    natsconn.ConnectOptions
		says string
	}{
		{"another CA", natsconn.ConnectOptions{CA: p.OtherCA, Cert: p.ClientCert, Key: p.ClientKey}, "is AGENTTEAM_NATS_CA the CA that signed its certificate?"},
		{"no client certificate", natsconn.ConnectOptions{CA: p.CA}, "does it want a client certificate"},
	} {
		_, err := natsconn.Connect(context.Background(), url, tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err = %v, want it to say %q", tc.name, err, tc.says)
		}
	}
}

// Each way serve cannot start is one sentence: the port taken, the data
// directory unusable, TLS files bad, routes without a cluster address.
func TestStartFailsWithASentence(t *testing.T) {
	busy := t.TempDir()
	taken := start(t, natsserver.ServerOptions{DataDir: busy})
	addr := strings.TrimPrefix(taken.ClientURL(), "nats://")
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := testpki.New(t)
	for _, tc := range []struct {
		name string
		o    natsserver.ServerOptions
		says string
	}{
		{"port taken", natsserver.ServerOptions{Listen: addr}, "the listen address " + addr + " is taken by another program"},
		{"data dir in use", natsserver.ServerOptions{DataDir: busy}, "the NATS data directory " + busy + " is in use by another agentteam serve"},
		{"data dir is a file", natsserver.ServerOptions{DataDir: file}, "the NATS data directory " + file + " is unusable"},
		{"bad certificate", natsserver.ServerOptions{TLS: natsserver.TLSFiles{Cert: garbage, Key: p.ServerKey}}, "TLS certificate " + garbage},
		{"bad CA", natsserver.ServerOptions{TLS: natsserver.TLSFiles{Cert: p.ServerCert, Key: p.ServerKey, CA: garbage}}, "holds no PEM certificate"},
		{"key alone", natsserver.ServerOptions{TLS: natsserver.TLSFiles{Key: p.ServerKey}}, "needs both --tls-cert and --tls-key"},
		{"routes without cluster", natsserver.ServerOptions{Routes: []string{"nats://127.0.0.1:6222"}}, "need --cluster"},
		{"bad listen", natsserver.ServerOptions{Listen: "nowhere"}, "is not HOST:PORT"},
		{"bad route", natsserver.ServerOptions{Cluster: "127.0.0.1:0", ServerName: "n1", Routes: []string{"http://x"}}, "is not nats://HOST:PORT"},
		{"bad team", natsserver.ServerOptions{Users: []natsserver.TeamUser{{Team: "a.>", User: "u", Password: "p"}}}, "only letters"},
		{"bad nkey", natsserver.ServerOptions{Users: []natsserver.TeamUser{{Team: "a", NKey: "SUABC"}}}, "not an nkey user's public key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			if o.Listen == "" {
				o.Listen = "127.0.0.1:0"
			}
			if o.DataDir == "" {
				o.DataDir = t.TempDir()
			}
			s, err := natsserver.Start(o)
			if err == nil {
				s.Shutdown()
				t.Fatalf("started; want %q", tc.says)
			}
			if !strings.Contains(err.Error(), tc.says) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("err = %q, want one sentence saying %q", err, tc.says)
			}
		})
	}
}

// Once a server is shut down, another may use its data directory at once
// and finds its streams there.
func TestADataDirectoryIsFreeAfterShutdown(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		s, err := natsserver.Start(natsserver.ServerOptions{Listen: "127.0.0.1:0", DataDir: dir})
		if err != nil {
			t.Fatalf("start %d: %v", i+1, err)
		}
		nc, err := natsconn.Connect(context.Background(), s.ClientURL(), natsconn.ConnectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		mb, err := natsstore.OpenMailbox(context.Background(), nc, "again")
		if err == nil && i == 0 {
			_, err = mb.Append(t.Context(), "lead", inbox.Message{Type: inbox.TypeMessage, From: "bob", Content: "kept"})
		}
		if err == nil && i == 1 {
			var all []inbox.Message
			if all, _, err = mb.ReadAll(t.Context(), "lead"); err == nil && (len(all) != 1 || all[0].Content != "kept") {
				t.Errorf("after a restart read %+v, want the kept message", all)
			}
		}
		nc.Close()
		s.Shutdown()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// A route peer that does not answer is a warning; the node serves on.
func TestAnUnreachableRoutePeerIsAWarning(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := l.Addr().String()
	l.Close()
	warned := make(chan string, 64)
	s := start(t, natsserver.ServerOptions{Cluster: "127.0.0.1:0", ServerName: "n1", Routes: []string{"nats://" + dead},
		Warn: func(w string) {
			select {
			case warned <- w:
			default:
			}
		}})
	nc := connect(t, s.ClientURL(), natsconn.ConnectOptions{})
	if err := nc.Flush(); err != nil {
		t.Fatalf("the node does not serve: %v", err)
	}
	timeout := time.After(30 * time.Second)
	for {
		select {
		case w := <-warned:
			if strings.Contains(w, "route peer "+dead+" is unreachable") {
				return
			}
		case <-timeout:
			t.Fatalf("no warning about the unreachable route peer %s", dead)
		}
	}
}

// counterDoc is a document a team may open.
type counterDoc struct {
	Counter int `json:"counter"`
}
