package cmd

import (
	"strings"
	"testing"
)

// parseStore reads the files, or a NATS server and a team named by the
// URL's path; anything else is bad usage that never shows a password.
func TestParseStore(t *testing.T) {
	for _, c := range []struct {
		in                  string
		server, shown, team string
	}{
		{"", "", "", ""},
		{"file", "", "", ""},
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222", "nats://127.0.0.1:4222", "default"},
		{"nats://h:4222/", "nats://h:4222", "nats://h:4222", "default"},
		{"nats://h:4222/web-1_a", "nats://h:4222", "nats://h:4222", "web-1_a"},
		{"nats://me:pw@h:4222/web", "nats://me:pw@h:4222", "nats://h:4222", "web"},
	} {
		got, err := parseStore(c.in)
		if err != nil || got.server != c.server || got.shown != c.shown || got.team != c.team {
			t.Errorf("parseStore(%q) = %+v, %v; want server %q shown %q team %q", c.in, got, err, c.server, c.shown, c.team)
		}
	}
	for _, in := range []string{"nats://h:4222/a.b", "nats://h:4222/a/b", "nats://h:4222/*", "nats://h:4222/>", "nats://h:4222/" + strings.Repeat("x", 65),
		"http://h:4222", "nats:h", "nats://", "nats://h:4222?x=1", "nats://h:4222#f", "tls://me:pw@h", "nats://me:pw@h:4222/a.b", "nats://me:pw@h:4222?q=1"} {
		_, err := parseStore(in)
		if ExitCode(err) != ExitUsage {
			t.Errorf("parseStore(%q): %v, want bad usage", in, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("parseStore(%q) shows the password: %v", in, err)
		}
	}
}
