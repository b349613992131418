package launch

import (
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
)

// parseStore reads the files, or a NATS server and a team named by the
// URL's path; anything else is bad usage that never shows a password.
func TestParseStore(t *testing.T) {
	for _, c := range []struct {
		in                  string
		server, shown, team string
		replicas            int
	}{
		{"", "", "", "", 0},
		{"file", "", "", "", 0},
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222", "nats://127.0.0.1:4222", "default", 0},
		{"nats://h:4222/", "nats://h:4222", "nats://h:4222", "default", 0},
		{"nats://h:4222/web-1_a", "nats://h:4222", "nats://h:4222", "web-1_a", 0},
		{"nats://me:pw@h:4222/web", "nats://me:pw@h:4222", "nats://h:4222", "web", 0},
		{"nats://h:4222/web?replicas=1", "nats://h:4222", "nats://h:4222", "web", 1},
		{"nats://h:4222/web?replicas=3", "nats://h:4222", "nats://h:4222", "web", 3},
		{"nats://me:pw@h:4222?replicas=5", "nats://me:pw@h:4222", "nats://h:4222", "default", 5},
		// Every node of a cluster, so a client starts on whichever
		// answers (the failover test, internal/store/failover, runs on this).
		{"nats://a:4222,b:4223,c:4224/web?replicas=3", "nats://a:4222,b:4223,c:4224", "nats://a:4222,b:4223,c:4224", "web", 3},
		// TLS only, as agentteam serve with a certificate says its address.
		{"tls://127.0.0.1:4222/web", "tls://127.0.0.1:4222", "tls://127.0.0.1:4222", "web", 0},
		{"tls://me:pw@a:4222,b:4223/web?replicas=3", "tls://me:pw@a:4222,b:4223", "tls://a:4222,b:4223", "web", 3},
	} {
		got, err := ParseStore(c.in)
		if err != nil || got.Server != c.server || got.Shown != c.shown || got.Team != c.team || got.Replicas != c.replicas {
			t.Errorf("parseStore(%q) = %+v, %v; want server %q shown %q team %q replicas %d", c.in, got, err, c.server, c.shown, c.team, c.replicas)
		}
	}
	// A replica count other than 1, 3 or 5, or any other query, is one
	// sentence that says what to write.
	for _, in := range []string{"nats://h:4222?replicas=2", "nats://h:4222?replicas=0", "nats://h:4222?replicas=7", "nats://h:4222?replicas=03",
		"nats://h:4222?replicas=", "nats://h:4222?replicas=three", "nats://h:4222?replicas=3&replicas=3", "nats://h:4222?replicas=3&x=1",
		"nats://me:pw@h:4222/web?replicas=-1", "nats://h:4222?replicas=%zz"} {
		_, err := ParseStore(in)
		if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), "1, 3 or 5") || strings.Count(err.Error(), "\n") > 0 {
			t.Errorf("parseStore(%q): %v, want one usage sentence naming 1, 3 or 5", in, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("parseStore(%q) shows the password: %v", in, err)
		}
	}
	// A team name ending with a suffix of another team's streams would
	// share them: refused, saying why.
	for _, in := range []string{"nats://h:4222/web_sessions", "nats://h:4222/web_leases", "nats://me:pw@h:4222/x_events"} {
		_, err := ParseStore(in)
		if exit.Code(err) != exit.Usage || !strings.Contains(err.Error(), "may not end with") || strings.Contains(err.Error(), "pw") {
			t.Errorf("parseStore(%q): %v, want bad usage saying the name may not end so", in, err)
		}
	}
	for _, in := range []string{"nats://h:4222/a.b", "nats://h:4222/a/b", "nats://h:4222/*", "nats://h:4222/>", "nats://h:4222/" + strings.Repeat("x", 65),
		"http://h:4222", "nats:h", "nats://", "nats://h:4222?x=1", "nats://h:4222#f", "tcp://me:pw@h", "tls:me:pw@h", "tls://", "nats://me:pw@h:4222/a.b", "nats://me:pw@h:4222?q=1"} {
		_, err := ParseStore(in)
		if exit.Code(err) != exit.Usage {
			t.Errorf("parseStore(%q): %v, want bad usage", in, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("parseStore(%q) shows the password: %v", in, err)
		}
	}
}
