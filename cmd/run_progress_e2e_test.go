package cmd

import (
	"net"
	"strings"
	"testing"
)

// TestClosedPortIsOneSentence: nothing listens at the base URL. The run ends
// after two short retries (never "retrying in 0s") with a sentence naming the
// server, not Go's dial text.
func TestClosedPortIsOneSentence(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String() + "/v1"
	ln.Close()
	r := runBin(t, t.TempDir(), []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + base, "AGENTTEAM_MODEL=fake-model"}, "", "run", "hello")
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", r.code, r.stderr)
	}
	last := strings.TrimSpace(r.stderr)
	last = last[strings.LastIndex(last, "\n")+1:]
	if !strings.HasPrefix(last, "agentteam: the lead stopped: cannot reach the model server at "+base+": connection refused") {
		t.Errorf("last line %q does not name the server", last)
	}
	if n := strings.Count(r.stderr, "retrying in"); n != 2 {
		t.Errorf("%d retries, want 2:\n%s", n, r.stderr)
	}
	for _, bad := range []string{"retrying in 0s", "dial tcp"} {
		if strings.Contains(r.stderr, bad) {
			t.Errorf("stderr says %q:\n%s", bad, r.stderr)
		}
	}
}
