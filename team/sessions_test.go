package team

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/storetest"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/team/sessions"
	"github.com/agentteam/agentteam/tools"
	"github.com/agentteam/agentteam/workspace"
)

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
	testkit.WriteSession(t, tm.ws.SessionPath("lead."+old), time.Now().Add(-time.Hour),
		testkit.User("the archived question"), testkit.Assistant("the archived answer"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chat := tm.StartChat(ctx, false)
	if err := chat.Say("today's question"); err != nil {
		t.Fatal(err)
	}
	if a := nextAnswer(t, events); said(a) != "today's answer" {
		t.Fatalf("first answer %q", said(a))
	}

	for _, bad := range []string{sessions.CurrentID, "../../etc/passwd", "20991231T000000.000"} {
		if err := tm.SwitchSession(t.Context(), bad, time.Now()); err == nil {
			t.Fatalf("switching to %q was not refused", bad)
		}
	}
	if got := convText(tm.Lead().Messages()); !strings.Contains(got, "today's question") {
		t.Fatalf("a refused switch changed the conversation: %s", got)
	}

	if err := tm.SwitchSession(t.Context(), old, time.Now()); err != nil {
		t.Fatal(err)
	}
	got := convText(tm.Lead().Messages())
	if !strings.Contains(got, "the archived question") || strings.Contains(got, "today's question") {
		t.Fatalf("the lead's conversation after the switch: %s", got)
	}
	list, err := sessions.List(tm.ws)
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
	err = tm.SwitchSession(t.Context(), list[1].ID, time.Now())
	if err == nil || !strings.Contains(err.Error(), "the lead is working") {
		t.Fatalf("switch during the lead's turn: %v", err)
	}
	releaseLead()
	if a := nextAnswer(t, events); said(a) != "a late answer" {
		t.Fatalf("answer %q", said(a))
	}

	// While a teammate works, too.
	if err := tm.Spawn(ctx, inbox.LeadName, tools.SpawnSpec{Name: "alice", Role: "r", Prompt: "work"}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "alice's request in flight", func() bool { return srv.InFlight() > 0 })
	err = tm.SwitchSession(t.Context(), list[1].ID, time.Now())
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
			sessions.ArchiveFile(ws.SessionPath(agent), now)
			return nil
		},
		Archived: func(t *testing.T, agent string) ([][][]byte, error) {
			paths, err := filepath.Glob(filepath.Join(filepath.Dir(ws.SessionPath(agent)), agent+".*.jsonl"))
			sort.Strings(paths) // the stamps sort by time
			var out [][][]byte
			for _, p := range paths {
				lines, err := loop.FileSession(p).Lines(t.Context())
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
