package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/team/sessions"
)

func sessionsJSONOf(t *testing.T, ws string) []sessions.Info {
	t.Helper()
	r := runBin(t, ws, nil, "", "sessions", "--json")
	mustSucceed(t, r, "sessions --json")
	var list []sessions.Info
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("sessions --json: %v\n%s", err, r.stdout)
	}
	return list
}

// TestSessionsListsAndShowsTheLeadsConversations: each run starts a new
// conversation and archives the last; sessions lists them with titles,
// show prints one readable, and bad ids get one sentence and exit 2 or 1.
func TestSessionsListsAndShowsTheLeadsConversations(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "", "sessions", "--json")
	mustSucceed(t, r, "sessions --json on a fresh workspace")
	if strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("fresh workspace: %q", r.stdout)
	}
	r = runBin(t, ws, nil, "", "sessions")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no conversations with the lead") {
		t.Fatalf("fresh table: %+v", r)
	}

	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "spawn alice as programmer to say hi"), "first run")
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "list team"), "second run")

	list := sessionsJSONOf(t, ws)
	if len(list) != 2 || !list[0].Current || list[0].ID != "current" || list[0].Title != "list team" ||
		list[1].Current || list[1].Title != "spawn alice as programmer to say hi" || list[1].Messages < 4 {
		t.Fatalf("sessions: %+v", list)
	}
	if _, err := os.Stat(filepath.Join(ws, ".agentteam", "sessions", "lead."+list[1].ID+".jsonl")); err != nil {
		t.Fatalf("the archived id names no file: %v", err)
	}

	r = runBin(t, ws, nil, "", "sessions")
	mustSucceed(t, r, "sessions")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "list team") || !strings.Contains(lines[2], list[1].ID) {
		t.Fatalf("table:\n%s", r.stdout)
	}

	r = runBin(t, ws, nil, "", "sessions", "show", list[1].ID)
	mustSucceed(t, r, "sessions show")
	for _, want := range []string{"── you\n  spawn alice as programmer to say hi", "── lead", "→ spawn_teammate(", "── tool result", "── inbox", `<message from="alice"`} {
		if !strings.Contains(r.stdout, want) {
			t.Fatalf("show lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runBin(t, ws, nil, "", "sessions", "show", "current", "--json")
	mustSucceed(t, r, "sessions show current --json")
	var msgs []sessions.Message
	if err := json.Unmarshal([]byte(r.stdout), &msgs); err != nil || len(msgs) == 0 || msgs[0].Content != "list team" {
		t.Fatalf("show --json: %v %+v", err, msgs)
	}

	for _, c := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"sessions", "show", "../../etc/passwd"}, 1, "is not a session id"},
		{[]string{"sessions", "show", "20990101T000000.000"}, 1, "no session 20990101T000000.000"},
		{[]string{"sessions", "show"}, 2, "show needs one session id"},
		{[]string{"sessions", "extra"}, 2, "takes no arguments"},
		{[]string{"chat", "--demo", "--resume", "20990101T000000.000"}, 2, "no session \"20990101T000000.000\""},
		{[]string{"chat", "--demo", "--resume", "a", "b"}, 2, "takes one session id"},
		{[]string{"chat", "--demo", "current"}, 2, "takes no arguments"},
	} {
		r := runBin(t, ws, nil, "", c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.say) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d saying %q in one line", c.args, r.code, r.stderr, c.code, c.say)
		}
	}
	// Without a terminal chat runs in lines: a good id is brought back, the
	// conversation it replaces kept as an earlier one.
	r = runBin(t, ws, nil, "", "chat", "--demo", "--resume", list[1].ID)
	mustSucceed(t, r, "chat --resume ID in lines")
	again := sessionsJSONOf(t, ws)
	if len(again) != 2 || again[0].Title != "spawn alice as programmer to say hi" || again[1].Title != "list team" {
		t.Fatalf("sessions after chat --resume %s: %+v", list[1].ID, again)
	}
}

// sessions --grep keeps the conversations in which a text was said, any
// case, each with where; none found is one sentence, not an error.
func TestSessionsGrepFindsWhereSomethingWasSaid(t *testing.T) {
	ws := t.TempDir()
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "spawn alice as programmer to say Pineapple pizza"), "first run")
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "list team"), "second run")
	list := sessionsJSONOf(t, ws)
	if len(list) != 2 {
		t.Fatalf("sessions: %+v", list)
	}
	r := runBin(t, ws, nil, "", "sessions", "--grep", "pineapple")
	mustSucceed(t, r, "sessions --grep")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], list[1].ID) || !strings.Contains(lines[2], "you: spawn alice as programmer to say Pineapple pizza") {
		t.Fatalf("grep table:\n%s", r.stdout)
	}
	r = runBin(t, ws, nil, "", "sessions", "--grep", "NAME", "--json")
	mustSucceed(t, r, "sessions --grep --json")
	var got []sessions.Info
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || len(got) != 2 {
		t.Fatalf("grep NAME (both: the list's table, alice's spawn) --json: %v %+v", err, got)
	}
	r = runBin(t, ws, nil, "", "sessions", "--grep", "no such words")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, `no conversation with the lead in`) || !strings.Contains(r.stderr, `says "no such words"`) {
		t.Fatalf("grep of nothing: %+v", r)
	}
}

// A conversation picked from the earlier ones keeps its id when it is put
// aside again: `sessions show ID` still finds it.
func TestASessionKeepsItsIDWhenArchivedAgain(t *testing.T) {
	ws := t.TempDir()
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "list team"), "first run")
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "say hello"), "second run")
	list := sessionsJSONOf(t, ws)
	if len(list) != 2 || list[1].Title != "list team" {
		t.Fatalf("sessions: %+v", list)
	}
	id := list[1].ID
	mustSucceed(t, runBin(t, ws, nil, "", "chat", "--demo", "--resume", id), "chat --resume ID")
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "a third"), "a fresh run")
	r := runBin(t, ws, nil, "", "sessions", "show", id)
	mustSucceed(t, r, "sessions show "+id)
	if !strings.Contains(r.stdout, "list team") {
		t.Fatalf("sessions show %s:\n%s", id, r.stdout)
	}
	if n := len(sessionsJSONOf(t, ws)); n != 3 {
		t.Fatalf("%d sessions, want 3", n)
	}
}

// A conversation given a name shows it as its title, is found by it, and
// keeps it when it is archived and picked again; no name takes it away.
func TestASessionsNameStaysWithIt(t *testing.T) {
	ws := t.TempDir()
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "list team"), "first run")
	mustSucceed(t, runBin(t, ws, nil, "", "sessions", "name", "current", "the", "parser", "work"), "sessions name current")
	if list := sessionsJSONOf(t, ws); len(list) != 1 || list[0].Title != "the parser work" || !list[0].Named {
		t.Fatalf("after naming the current one: %+v", list)
	}
	mustSucceed(t, runBin(t, ws, nil, "", "run", "--demo", "say hello"), "a fresh run archives it")
	list := sessionsJSONOf(t, ws)
	if len(list) != 2 || list[0].Named || list[1].Title != "the parser work" {
		t.Fatalf("after archiving: %+v", list)
	}
	id := list[1].ID
	r := runBin(t, ws, nil, "", "sessions", "--grep", "parser")
	if r.code != 0 || !strings.Contains(r.stdout, id) || !strings.Contains(r.stdout, "its name: the parser work") {
		t.Fatalf("grep by the name: %+v", r)
	}
	mustSucceed(t, runBin(t, ws, nil, "", "chat", "--demo", "--resume", id), "chat --resume ID")
	if list := sessionsJSONOf(t, ws); list[0].ID != "current" || list[0].Title != "the parser work" {
		t.Fatalf("picked again: %+v", list)
	}
	mustSucceed(t, runBin(t, ws, nil, "", "sessions", "name", "current"), "sessions name current (none)")
	if list := sessionsJSONOf(t, ws); list[0].Named || list[0].Title != "list team" {
		t.Fatalf("with the name taken away: %+v", list)
	}
	r = runBin(t, ws, nil, "", "sessions", "name", "../x", "y")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "is not a session id") {
		t.Fatalf("a bad id: %+v", r)
	}
}
