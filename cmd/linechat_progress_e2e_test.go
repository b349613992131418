package cmd

import (
	"strings"
	"testing"
)

// In the line chat the demo lead answers the prompt once with what it did;
// each teammate's report that wakes it later is answered with that report's
// short progress line, not the commands and every earlier report again.
func TestChatInLinesReportsAreShortProgress(t *testing.T) {
	lc := startLineChat(t, t.TempDir(), nil, "chat", "--demo", "--plain")
	lc.send("spawn alice as programmer; spawn bob as tester")
	lc.waitFor("- spawn bob as tester: done", 1)
	// Each ready report twice: the report's own line, then the lead's word on it.
	const hello = "ready — " + "Say hello to the lead and report what you can do."
	lc.waitFor(hello, 4)
	// The person's message to alice makes her report once more, after the
	// prompt's answer: it wakes the lead.
	lc.send("/send alice please add a test")
	lc.waitFor("received from user: please add a test", 2)
	lc.send("/quit")
	if code := lc.exit(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, lc.output())
	}
	out := lc.output()
	if n := strings.Count(out, "Here is what I did"); n != 1 {
		t.Errorf("the commands are summarised %d times, want once:\n%s", n, out)
	}
	for _, once := range []string{"- spawn alice as programmer: done", "- alice: done — " + hello, "- bob: done — " + hello} {
		if n := strings.Count(out, once); n != 1 {
			t.Errorf("%q is said %d times, want once:\n%s", once, n, out)
		}
	}
	// The answer to alice's last report is its line alone.
	at := strings.Index(out, "lead> /send alice please add a test\n")
	end := strings.Index(out, "lead> /quit")
	if at < 0 || end < at {
		t.Fatalf("no /send then /quit:\n%s", out)
	}
	var said []string
	for _, l := range strings.Split(out[at:end], "\n") {
		if strings.HasPrefix(l, "- ") {
			said = append(said, l)
		}
	}
	if want := "- alice: done — received from user: please add a test"; len(said) != 1 || said[0] != want {
		t.Errorf("the lead answered alice's report with %q, want only %q:\n%s", said, want, out)
	}
}
