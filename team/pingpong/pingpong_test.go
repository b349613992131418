package pingpong

import "testing"

func TestPingPongIsSeenOnceAfterARunOfRepeats(t *testing.T) {
	var p Detector
	seen := 0
	for i := range 20 {
		from, to, text := "alice", "bob", "ping 1"
		if i%2 == 1 {
			from, to, text = "bob", "alice", "PONG  2"
		}
		if p.Observe(from, to, text) {
			seen++
			if i+1 != Run {
				t.Errorf("seen at message %d, want %d", i+1, Run)
			}
		}
	}
	if seen != 1 {
		t.Errorf("seen %d times in one run, want once", seen)
	}
	// Something new breaks the run; a new run is told again.
	p.Observe("alice", "bob", "here is the parser")
	for i := range Run {
		from, to := "bob", "alice"
		if i%2 == 1 {
			from, to = "alice", "bob"
		}
		if p.Observe(from, to, "ok") && i+2 < Run {
			t.Errorf("seen too early, at %d", i)
		}
	}
}

func TestPingPongIgnoresWorkAndThePeople(t *testing.T) {
	var p Detector
	for i := range 40 {
		if p.Observe("alice", "bob", "same") { // one way only: not a bounce
			t.Fatalf("a one-way stream was taken for a loop at %d", i)
		}
		if p.Observe("lead", "bob", "same") || p.Observe("bob", "lead", "same") {
			t.Fatal("the lead's messages were counted")
		}
	}
	for i := range 40 {
		from, to := "carol", "dave"
		if i%2 == 1 {
			from, to = to, from
		}
		if p.Observe(from, to, "step "+string(rune('a'+i%26))) {
			t.Fatalf("an exchange that moves on was taken for a loop at %d", i)
		}
	}
}

func TestPingPongIsSeenWhenTheMessagesInterleave(t *testing.T) {
	var p Detector
	order := []string{"alice", "alice", "bob", "bob", "alice", "bob", "bob", "alice", "alice", "bob"}
	seen := 0
	for _, from := range order {
		to, text := "bob", "ping"
		if from == "bob" {
			to, text = "alice", "pong"
		}
		if p.Observe(from, to, text) {
			seen++
		}
	}
	if seen != 1 {
		t.Errorf("seen %d times, want once", seen)
	}
}
