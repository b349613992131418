package team

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/storetest"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

// writeSession writes a session file as the loop records one, dated at mtime.
func writeSession(t *testing.T, path string, mtime time.Time, msgs ...openai.ChatCompletionMessage) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, m := range msgs {
		line, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func user(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: s}
}

func assistant(s string) openai.ChatCompletionMessage {
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: s}
}

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
	writeSession(t, ws.SessionPath("lead"), day.Add(72*time.Hour),
		user("<message from=\"alice\" type=\"result\" id=\"1\">\ndone\n</message>"), user("fix the build\nthen test"), assistant("ok"))
	writeSession(t, ws.SessionPath("lead.20261120T090000.000"), day, user("first chat"), assistant("hi"))
	writeSession(t, ws.SessionPath("lead.20261121T090000.000"), day.Add(24*time.Hour),
		user("second \x1b[31mchat\x07 "+strings.Repeat("x", 100)))
	// Not sessions of the lead: a teammate's, a stray name, an empty one.
	writeSession(t, ws.SessionPath("alice.20261121T090000.000"), day, user("alice's"))
	writeSession(t, ws.SessionPath("lead.backup"), day, user("stray"))
	writeSession(t, ws.SessionPath("lead.20261122T090000.000"), day)

	list, err := ListSessions(ws)
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
	list, err := ListSessions(sessionsWorkspace(t))
	if err != nil || len(list) != 0 {
		t.Fatalf("list %v, err %v", list, err)
	}
}

func TestReadSessionIsReadable(t *testing.T) {
	ws := sessionsWorkspace(t)
	call := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, ToolCalls: []openai.ToolCall{{
		ID: "c1", Type: "function", Function: openai.FunctionCall{Name: "list_team", Arguments: "{}"}}}}
	writeSession(t, ws.SessionPath("lead"), time.Now(),
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: "secret prompt"},
		user("who is here?"), call,
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: "c1", Content: "nobody"},
		user("<message from=\"bob\" type=\"message\" id=\"2\">\nhey\n</message>"))
	msgs, err := ReadSession(ws, CurrentSessionID)
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
	if _, err := ReadSession(ws, "20990101T000000.000"); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Fatalf("a missing session: %v", err)
	}
}

// An id is a name inside sessions/, never a path: a hostile id cannot make
// show or restore read or move another file.
func TestSessionIDsAreNotPaths(t *testing.T) {
	ws := sessionsWorkspace(t)
	outside := filepath.Join(ws.Root, "outside.jsonl")
	writeSession(t, outside, time.Now(), user("not a session"))
	writeSession(t, ws.SessionPath("lead"), time.Now(), user("current"))
	for _, id := range []string{"../../../../outside", "x/../../../outside", "../../../outside", "../outside", "/etc/passwd", "", "lead", "20261120T090000.000/../../x"} {
		if _, err := ReadSession(ws, id); err == nil {
			t.Errorf("ReadSession(%q) read something", id)
		}
		if err := RestoreSession(ws, id, time.Now()); err == nil {
			t.Errorf("RestoreSession(%q) did something", id)
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
	writeSession(t, target, time.Now(), user("the secret"))
	link := ws.SessionPath("lead.20261120T090000.000")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	list, err := ListSessions(ws)
	if err != nil || len(list) != 0 {
		t.Fatalf("listed %+v, err %v", list, err)
	}
	if msgs, err := ReadSession(ws, "20261120T090000.000"); err == nil {
		t.Fatalf("read through a link: %+v", msgs)
	}
	if err := RestoreSession(ws, "20261120T090000.000", time.Now()); err == nil {
		t.Fatal("restored a link")
	}
	if _, err := os.Lstat(ws.SessionPath("lead")); !os.IsNotExist(err) {
		t.Fatalf("lead.jsonl exists after a refused restore: %v", err)
	}
}

func TestRestoreSessionArchivesTheCurrentOne(t *testing.T) {
	ws := sessionsWorkspace(t)
	day := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	writeSession(t, ws.SessionPath("lead"), day.Add(time.Hour), user("the current one"))
	writeSession(t, ws.SessionPath("lead.20261120T090000.000"), day, user("the old one"))
	// The stamp of now is taken already: the archive moves on a millisecond.
	now := time.Date(2026, 11, 23, 14, 0, 0, 0, time.UTC)
	writeSession(t, ws.SessionPath("lead.20261123T140000.000"), day, user("taken"))

	if err := RestoreSession(ws, "20261120T090000.000", now); err != nil {
		t.Fatal(err)
	}
	list, err := ListSessions(ws)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]SessionInfo{}
	for _, s := range list {
		byID[s.ID] = s
	}
	if byID[CurrentSessionID].Title != "the old one" || !byID[CurrentSessionID].Time.Equal(day) {
		t.Fatalf("current after restore: %+v", byID[CurrentSessionID])
	}
	if byID["20261123T140000.001"].Title != "the current one" || byID["20261123T140000.000"].Title != "taken" {
		t.Fatalf("archives after restore: %+v", list)
	}
	if _, ok := byID["20261120T090000.000"]; ok || len(list) != 3 {
		t.Fatalf("the restored archive is still listed: %+v", list)
	}
	if err := RestoreSession(ws, "20261120T090000.000", now); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Fatalf("restoring it again: %v", err)
	}
}

// /sessions ID in a running chat: the lead goes on from the chosen
// conversation (its next request carries it), the one it had is archived,
// and a switch is refused while the lead or a teammate works.
func TestSwitchSessionGoesOnFromTheChosenConversation(t *testing.T) {
	leadHold, aliceHold := make(chan struct{}), make(chan struct{})
	script := fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{Content: "today's answer"}, {Content: "going on with the archived one"}},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" {
			<-aliceHold
			return fakellm.Reply{Content: "alice done"}
		}
		<-leadHold
		return fakellm.Reply{Content: "a late answer"}
	})
	srv := fakellm.New(script)
	defer srv.Close()
	releaseLead, releaseAlice := sync.OnceFunc(func() { close(leadHold) }), sync.OnceFunc(func() { close(aliceHold) })
	defer releaseAlice()
	defer releaseLead()
	tm, events := chatTeam(t, srv)
	const old = "20261120T090000.000"
	writeSession(t, tm.ws.SessionPath("lead."+old), time.Now().Add(-time.Hour),
		user("the archived question"), assistant("the archived answer"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chat := tm.StartChat(ctx, false)
	if err := chat.Say("today's question"); err != nil {
		t.Fatal(err)
	}
	if a := nextAnswer(t, events); said(a) != "today's answer" {
		t.Fatalf("first answer %q", said(a))
	}

	for _, bad := range []string{CurrentSessionID, "../../etc/passwd", "20991231T000000.000"} {
		if err := tm.SwitchSession(bad, time.Now()); err == nil {
			t.Fatalf("switching to %q was not refused", bad)
		}
	}
	if got := convText(tm.Lead().Messages()); !strings.Contains(got, "today's question") {
		t.Fatalf("a refused switch changed the conversation: %s", got)
	}

	if err := tm.SwitchSession(old, time.Now()); err != nil {
		t.Fatal(err)
	}
	got := convText(tm.Lead().Messages())
	if !strings.Contains(got, "the archived question") || strings.Contains(got, "today's question") {
		t.Fatalf("the lead's conversation after the switch: %s", got)
	}
	list, err := ListSessions(tm.ws)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, s := range list {
		titles = append(titles, s.ID+"="+s.Title)
		if s.ID == old {
			t.Fatalf("the restored session is still listed as archived: %v", titles)
		}
	}
	if len(list) != 2 || !list[0].Current || list[0].Title != "the archived question" || list[1].Title != "today's question" {
		t.Fatalf("sessions after the switch: %v", titles)
	}

	if err := chat.Say("go on"); err != nil {
		t.Fatal(err)
	}
	if a := nextAnswer(t, events); said(a) != "going on with the archived one" {
		t.Fatalf("answer after the switch %q", said(a))
	}
	reqs := srv.Requests("lead")
	last := reqs[len(reqs)-1]
	sent := convText(last.Messages)
	for _, want := range []string{"the archived question", "the archived answer", "go on"} {
		if !strings.Contains(sent, want) {
			t.Fatalf("the request after the switch lacks %q: %s", want, sent)
		}
	}
	if strings.Contains(sent, "today's question") {
		t.Fatalf("the request after the switch carries the conversation switched away from: %s", sent)
	}

	// While the lead works, the switch is refused and nothing moves.
	if err := chat.Say("a long one"); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "the lead's request in flight", func() bool { return srv.InFlight() > 0 })
	err = tm.SwitchSession(list[1].ID, time.Now())
	if err == nil || !strings.Contains(err.Error(), "the lead is working") {
		t.Fatalf("switch during the lead's turn: %v", err)
	}
	releaseLead()
	if a := nextAnswer(t, events); said(a) != "a late answer" {
		t.Fatalf("answer %q", said(a))
	}

	// While a teammate works, too.
	if err := tm.Spawn(ctx, workspace.LeadName, tools.SpawnSpec{Name: "alice", Role: "r", Prompt: "work"}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "alice's request in flight", func() bool { return srv.InFlight() > 0 })
	err = tm.SwitchSession(list[1].ID, time.Now())
	if err == nil || !strings.Contains(err.Error(), "alice is working") {
		t.Fatalf("switch while alice works: %v", err)
	}
	releaseAlice()
	if v := srv.Violations(); len(v) > 0 {
		t.Fatal(v)
	}
	cancel()
	<-chat.Done()
}

func convText(msgs []openai.ChatCompletionMessage) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return b.String()
}

// The teammates' session files (the default store) keep the session
// contract: loop.FileSession, archived by archiveSession as
// sessions/NAME.<stamp>.jsonl.
func TestFileSessionsKeepTheSessionContract(t *testing.T) {
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	storetest.RunSessions(t, storetest.SessionsOpener{
		Open: func(t *testing.T, agent string) storetest.SessionLog {
			return loop.FileSession(ws.SessionPath(agent))
		},
		Archive: func(t *testing.T, agent string, now time.Time) error {
			archiveSession(ws.SessionPath(agent), now)
			return nil
		},
		Archived: func(t *testing.T, agent string) ([][][]byte, error) {
			paths, err := filepath.Glob(filepath.Join(filepath.Dir(ws.SessionPath(agent)), agent+".*.jsonl"))
			sort.Strings(paths) // the stamps sort by time
			var out [][][]byte
			for _, p := range paths {
				lines, err := loop.FileSession(p).Lines()
				if err != nil {
					return nil, err
				}
				out = append(out, lines)
			}
			return out, err
		},
		Tear: func(t *testing.T, agent string, junk []byte) {
			f, err := os.OpenFile(ws.SessionPath(agent), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write(junk); err != nil {
				t.Fatal(err)
			}
		},
	})
}
