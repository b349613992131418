package cmd

import (
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/testutil/testpki"
)

// The address a serve with a certificate says, tls://HOST:PORT, is a
// store every command takes as it is, with the CA in AGENTTEAM_NATS_CA:
// the same scenario of every command as against serve --users. Without
// the CA, the tls:// store is one sentence that names it.
func TestEveryCommandWorksWithATLSStore(t *testing.T) {
	pki := testpki.New(t)
	s := startSecuredServe(t, "--tls-cert", pki.ServerCert, "--tls-key", pki.ServerKey)
	store := strings.Replace(s.url, "nats://", "tls://", 1) + "/alpha"
	if !strings.HasPrefix(store, "tls://127.0.0.1:") {
		t.Fatalf("the store is %s", store)
	}
	r := quick(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + store, natsconn.EnvCreds + "=" + s.alice}, "team")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "TLS with the NATS server at tls://127.0.0.1:") ||
		!strings.Contains(r.stderr, natsconn.EnvCA) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("team on a tls:// store without the CA: exit %d\n%s", r.code, r.stderr)
	}
	everyCommandWorks(t, s, store, []string{natsconn.EnvCA + "=" + pki.CA})
}

// A tls:// store whose server speaks no TLS is one sentence saying so, not
// one about a CA nobody set.
func TestATLSStoreOnAServerWithoutTLSSaysSo(t *testing.T) {
	nt := startNATSTeam(t, "plain")
	store := strings.Replace(nt.url, "nats://", "tls://", 1)
	r := quick(t, t.TempDir(), []string{"AGENTTEAM_STORE=" + store}, "team")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "does not speak TLS, yet its address asks for it (tls://)") ||
		strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("team on tls:// to a server without TLS: exit %d\n%s", r.code, r.stderr)
	}
}
