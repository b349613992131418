package team

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentteam/agentteam/inbox"
)

func TestPingPongIsSeenOnceAfterARunOfRepeats(t *testing.T) {
	var p pingPong
	seen := 0
	for i := range 20 {
		from, to, text := "alice", "bob", "ping 1"
		if i%2 == 1 {
			from, to, text = "bob", "alice", "PONG  2"
		}
		if p.observe(from, to, text) {
			seen++
			if i+1 != pingPongRun {
				t.Errorf("seen at message %d, want %d", i+1, pingPongRun)
			}
		}
	}
	if seen != 1 {
		t.Errorf("seen %d times in one run, want once", seen)
	}
	// Something new breaks the run; a new run is told again.
	p.observe("alice", "bob", "here is the parser")
	for i := range pingPongRun {
		from, to := "bob", "alice"
		if i%2 == 1 {
			from, to = "alice", "bob"
		}
		if p.observe(from, to, "ok") && i+2 < pingPongRun {
			t.Errorf("seen too early, at %d", i)
		}
	}
}

func TestPingPongIgnoresWorkAndThePeople(t *testing.T) {
	var p pingPong
	for i := range 40 {
		if p.observe("alice", "bob", "same") { // one way only: not a bounce
			t.Fatalf("a one-way stream was taken for a loop at %d", i)
		}
		if p.observe("lead", "bob", "same") || p.observe("bob", "lead", "same") {
			t.Fatal("the lead's messages were counted")
		}
	}
	for i := range 40 {
		from, to := "carol", "dave"
		if i%2 == 1 {
			from, to = to, from
		}
		if p.observe(from, to, "step "+string(rune('a'+i%26))) {
			t.Fatalf("an exchange that moves on was taken for a loop at %d", i)
		}
	}
}

func TestALongReportIsCutToAMessage(t *testing.T) {
	long := strings.Repeat("é", inbox.MaxContentBytes)
	got := fitMessage(long, "sessions/alice.jsonl")
	if len(got) > inbox.MaxContentBytes || !utf8.ValidString(got) || !strings.Contains(got, "sessions/alice.jsonl") {
		t.Errorf("cut to %d bytes, valid %v, ends %q", len(got), utf8.ValidString(got), got[len(got)-80:])
	}
	if fitMessage("short", "x") != "short" {
		t.Error("a short report was changed")
	}
}

// Two teammates bouncing the same messages are seen however their
// messages interleave (both send at once, so one may send twice in a row).
func TestPingPongIsSeenWhenTheMessagesInterleave(t *testing.T) {
	var p pingPong
	order := []string{"alice", "alice", "bob", "bob", "alice", "bob", "bob", "alice", "alice", "bob"}
	seen := 0
	for _, from := range order {
		to, text := "bob", "ping"
		if from == "bob" {
			to, text = "alice", "pong"
		}
		if p.observe(from, to, text) {
			seen++
		}
	}
	if seen != 1 {
		t.Errorf("seen %d times, want once", seen)
	}
}
