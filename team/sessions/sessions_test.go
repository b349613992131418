package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/workspace"
)

func sessionsWorkspace(t *testing.T) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestListSessionsCurrentFirstThenNewestWithTitles(t *testing.T) {
	ws := sessionsWorkspace(t)
	day := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	testkit.WriteSession(t, ws.SessionPath("lead"), day.Add(72*time.Hour),
		testkit.User("<message from=\"alice\" type=\"result\" id=\"1\">\ndone\n</message>"), testkit.User("fix the build\nthen test"), testkit.Assistant("ok"))
	testkit.WriteSession(t, ws.SessionPath("lead.20261120T090000.000"), day, testkit.User("first chat"), testkit.Assistant("hi"))
	testkit.WriteSession(t, ws.SessionPath("lead.20261121T090000.000"), day.Add(24*time.Hour),
		testkit.User("second \x1b[31mchat\x07 "+strings.Repeat("x", 100)))
	// Not sessions of the lead: a teammate's, a stray name, an empty one.
	testkit.WriteSession(t, ws.SessionPath("alice.20261121T090000.000"), day, testkit.User("alice's"))
	testkit.WriteSession(t, ws.SessionPath("lead.backup"), day, testkit.User("stray"))
	testkit.WriteSession(t, ws.SessionPath("lead.20261122T090000.000"), day)

	list, err := List(ws)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	if got := strings.Join(ids, " "); got != "current 20261121T090000.000 20261120T090000.000" {
		t.Fatalf("ids %q", got)
	}
	if list[0].Title != "fix the build" || !list[0].Current || list[0].Messages != 3 {
		t.Fatalf("current: %+v (the title skips inbox batches and takes the first line)", list[0])
	}
	if !list[2].Time.Equal(day) || list[2].Title != "first chat" || list[2].Messages != 2 {
		t.Fatalf("oldest: %+v", list[2])
	}
	title := list[1].Title
	if strings.ContainsAny(title, "\x1b\x07") || len([]rune(title)) > 60 || !strings.HasSuffix(title, "…") {
		t.Fatalf("title not cleaned and cut: %q", title)
	}
}

func TestListSessionsOfAFreshWorkspaceIsEmpty(t *testing.T) {
	list, err := List(sessionsWorkspace(t))
	if err != nil || len(list) != 0 {
		t.Fatalf("list %v, err %v", list, err)
	}
}

func TestReadSessionIsReadable(t *testing.T) {
	ws := sessionsWorkspace(t)
	call := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
		ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "list_team", Arguments: "{}"}}}}
	testkit.WriteSession(t, ws.SessionPath("lead"), time.Now(),
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: "secret prompt"},
		testkit.User("who is here?"), call,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "c1", Content: "nobody"},
		testkit.User("<message from=\"bob\" type=\"message\" id=\"2\">\nhey\n</message>"))
	msgs, err := Read(ws, CurrentID)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 4 {
		t.Fatalf("%d messages, want 4 (no system message): %+v", len(msgs), msgs)
	}
	if msgs[1].Role != "assistant" || len(msgs[1].Tools) != 1 || msgs[1].Tools[0] != "list_team({})" {
		t.Fatalf("tool call: %+v", msgs[1])
	}
	if msgs[0].Inbox || !msgs[3].Inbox {
		t.Fatalf("inbox marks: %+v", msgs)
	}
	if _, err := Read(ws, "20990101T000000.000"); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Fatalf("a missing session: %v", err)
	}
}

// An id is a name inside sessions/, never a path: a hostile id cannot make
// show or restore read or move another file.
func TestSessionIDsAreNotPaths(t *testing.T) {
	ws := sessionsWorkspace(t)
	outside := filepath.Join(ws.Root, "outside.jsonl")
	testkit.WriteSession(t, outside, time.Now(), testkit.User("not a session"))
	testkit.WriteSession(t, ws.SessionPath("lead"), time.Now(), testkit.User("current"))
	for _, id := range []string{"../../../../outside", "x/../../../outside", "../../../outside", "../outside", "/etc/passwd", "", "lead", "20261120T090000.000/../../x"} {
		if _, err := Read(ws, id); err == nil {
			t.Errorf("Read(%q) read something", id)
		}
		if err := Restore(ws, id, time.Now()); err == nil {
			t.Errorf("Restore(%q) did something", id)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("the outside file moved: %v", err)
	}
}

// A session file that is a link (a checked-out .agentteam/ could hold one)
// is neither listed, read nor restored.
func TestSessionLinksAreRefused(t *testing.T) {
	ws := sessionsWorkspace(t)
	target := filepath.Join(ws.Root, "secret.jsonl")
	testkit.WriteSession(t, target, time.Now(), testkit.User("the secret"))
	link := ws.SessionPath("lead.20261120T090000.000")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	list, err := List(ws)
	if err != nil || len(list) != 0 {
		t.Fatalf("listed %+v, err %v", list, err)
	}
	if msgs, err := Read(ws, "20261120T090000.000"); err == nil {
		t.Fatalf("read through a link: %+v", msgs)
	}
	if err := Restore(ws, "20261120T090000.000", time.Now()); err == nil {
		t.Fatal("restored a link")
	}
	if _, err := os.Lstat(ws.SessionPath("lead")); !os.IsNotExist(err) {
		t.Fatalf("lead.jsonl exists after a refused restore: %v", err)
	}
}

func TestRestoreSessionArchivesTheCurrentOne(t *testing.T) {
	ws := sessionsWorkspace(t)
	day := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	testkit.WriteSession(t, ws.SessionPath("lead"), day.Add(time.Hour), testkit.User("the current one"))
	testkit.WriteSession(t, ws.SessionPath("lead.20261120T090000.000"), day, testkit.User("the old one"))
	// The stamp of now is taken already: the archive moves on a millisecond.
	now := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	testkit.WriteSession(t, ws.SessionPath("lead.20261123T140000.000"), day, testkit.User("taken"))

	if err := Restore(ws, "20261120T090000.000", now); err != nil {
		t.Fatal(err)
	}
	list, err := List(ws)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Info{}
	for _, s := range list {
		byID[s.ID] = s
	}
	if byID[CurrentID].Title != "the old one" || !byID[CurrentID].Time.Equal(day) {
		t.Fatalf("current after restore: %+v", byID[CurrentID])
	}
	if byID["20261123T140000.001"].Title != "the current one" || byID["20261123T140000.000"].Title != "taken" {
		t.Fatalf("archives after restore: %+v", list)
	}
	if _, ok := byID["20261120T090000.000"]; ok || len(list) != 3 {
		t.Fatalf("the restored archive is still listed: %+v", list)
	}
	if err := Restore(ws, "20261120T090000.000", now); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Fatalf("restoring it again: %v", err)
	}
}
