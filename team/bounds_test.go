package team

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentteam/agentteam/inbox"
)

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
