package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/internal/ui/tui/bridge"
	"github.com/agentteam/agentteam/internal/ui/tui/panel"
	"github.com/agentteam/agentteam/team/event"
)

// clock is a hand-moved clock for the progress.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func withClock(hs *harness) *clock {
	c := &clock{t: time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)}
	hs.m.prog.Now = c.now
	return c
}

// lineWith is the screen's first line that holds s.
func lineWith(t *testing.T, v, s string) string {
	t.Helper()
	for _, l := range strings.Split(v, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	t.Fatalf("no line holds %q:\n%s", s, v)
	return ""
}

// TestProgressSpinnerAndElapsed: the lead and a working teammate show a
// spinner and their time at work, the lead's running tool is named, the
// spinner moves on a tick, and both go once the work ends.
func TestProgressSpinnerAndElapsed(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	c := withClock(hs)
	if cmd := hs.send(members("alice:working", "bob:idle")); cmd == nil {
		t.Fatal("no tick asked for once a teammate works")
	}
	hs.enter("build it")
	hs.send(bridge.Batch{Activity: map[string]string{"lead": "running bash"}})
	c.t = c.t.Add(75 * time.Second)
	v := hs.view()
	title := lineWith(t, v, "auto off")
	if !strings.Contains(title, panel.SpinFrames[0]+" working 1m15s · running bash") {
		t.Fatalf("lead's status lacks spinner, time or tool: %q", title)
	}
	if row := lineWith(t, v, "alice tester"); !strings.Contains(row, panel.SpinFrames[0]+" alice tester working 1m15s") {
		t.Fatalf("alice's row lacks spinner and time: %q", row)
	}
	if row := lineWith(t, v, "bob tester"); strings.ContainsAny(row, strings.Join(panel.SpinFrames, "")) {
		t.Fatalf("idle bob has a spinner: %q", row)
	}

	if cmd := hs.send(panel.TickMsg(c.t)); cmd == nil {
		t.Fatal("the tick did not ask for the next one while agents work")
	}
	if title := lineWith(t, hs.view(), "auto off"); !strings.Contains(title, panel.SpinFrames[1]+" working") {
		t.Fatalf("the spinner did not move on a tick: %q", title)
	}

	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: "done"}}))
	hs.send(members("alice:idle", "bob:idle"))
	v = hs.view()
	if title := lineWith(t, v, "auto off"); !strings.Contains(title, "lead · idle") {
		t.Fatalf("the lead is not idle after its answer: %q", title)
	}
	if strings.Contains(v, "1m15s") {
		t.Fatalf("a time at work stays after the work ended:\n%s", v)
	}
	if cmd := hs.send(panel.TickMsg(c.t)); cmd != nil {
		t.Fatal("ticks go on while nobody works")
	}
}

// TestProgressTimeRestartsPerTurn: a new turn of the lead counts from its own start.
func TestProgressTimeRestartsPerTurn(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	c := withClock(hs)
	hs.enter("one")
	c.t = c.t.Add(40 * time.Second)
	hs.send(events(event.Event{Agent: "lead", Payload: event.Answer{Text: "first"}}))
	c.t = c.t.Add(time.Hour)
	hs.enter("two")
	c.t = c.t.Add(3 * time.Second)
	if title := lineWith(t, hs.view(), "auto off"); !strings.Contains(title, "working 3s") {
		t.Fatalf("the second turn's time is not its own: %q", title)
	}
}

// TestContextFullness: each agent's last model call gives how full its
// context window is, in the team panel and (for the focused agent) the
// status line; a compaction makes it unknown until the next call.
func TestContextFullness(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true, ModelName: "openai/gpt-4o"})
	snap := members("alice:working")
	snap.Config.Teammates[0].Model = "anthropic/claude-sonnet-4"
	hs.send(snap)
	hs.send(events(
		event.Event{Agent: "lead", Payload: event.Reply{Text: "hi", Tokens: 32_000, Turn: 1}},
		event.Event{Agent: "alice", Payload: event.Reply{Text: "ok", Tokens: 150_000, Turn: 3}},
	))
	v := hs.view()
	if l := lineWith(t, v, "lead · openai/gpt-4o"); !strings.Contains(l, "ctx 25%") {
		t.Fatalf("lead's row lacks 32k of 128k = 25%%: %q", l)
	}
	if l := lineWith(t, v, "alice tester"); !strings.Contains(l, "ctx 75%") {
		t.Fatalf("alice's row lacks 150k of 200k = 75%%: %q", l)
	}
	status := strings.Split(v, "\n")[len(strings.Split(v, "\n"))-1]
	if !strings.Contains(status, "lead ctx 25%") {
		t.Fatalf("status line lacks the lead's context: %q", status)
	}
	hs.send(tea.KeyPressMsg{Code: tea.KeyTab})
	hs.flush()
	v = hs.view()
	if status := v[strings.LastIndex(v, "\n")+1:]; !strings.Contains(status, "alice ctx 75%") {
		t.Fatalf("status line lacks the focused alice's context: %q", status)
	}
	hs.send(events(event.Event{Agent: "alice", Payload: event.Compacted{Dropped: 10, Turn: 4}}))
	if l := lineWith(t, hs.view(), "alice tester"); strings.Contains(l, "ctx") {
		t.Fatalf("a compacted context still shows its old size: %q", l)
	}
}

// TestFocusedTeammateTitleShowsItsWork: the focused teammate's title has
// its spinner, time at work and running tool, like the lead's.
func TestFocusedTeammateTitleShowsItsWork(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	c := withClock(hs)
	hs.send(members("alice:working"))
	hs.send(tea.KeyPressMsg{Code: tea.KeyTab})
	hs.flush()
	hs.send(bridge.Batch{Activity: map[string]string{"alice": "running bash"}})
	c.t = c.t.Add(9 * time.Second)
	if l := lineWith(t, hs.view(), "read-only"); !strings.Contains(l, "alice · "+panel.SpinFrames[0]+" working 9s · running bash · read-only") {
		t.Fatalf("alice's title: %q", l)
	}
	hs.send(members("alice:idle"))
	if l, _, _ := strings.Cut(lineWith(t, hs.view(), "read-only"), "│"); strings.Contains(l, "working") {
		t.Fatalf("idle alice's title still says working: %q", l)
	}
}

// TestProgressFitsSmallAndLargeScreens: spinners, times and context
// fullness keep the screen exactly its size at 80×24 and 120×40, and the
// lead's progress shows on both.
func TestProgressFitsSmallAndLargeScreens(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		hs := newHarness(t, size[0], size[1], Options{HasModel: true, ModelName: "gpt-4o"})
		c := withClock(hs)
		snap := members("alice:working", "bob:working", "carol:idle")
		snap.Config.Teammates[0].Model = "some-provider/a-rather-long-model-name"
		hs.send(snap)
		hs.enter("go")
		hs.send(events(
			event.Event{Agent: "lead", Payload: event.Reply{Tokens: 64_000}},
			event.Event{Agent: "alice", Payload: event.Reply{Tokens: 12_800}},
		))
		hs.send(bridge.Batch{Activity: map[string]string{"lead": "running bash", "alice": "running edit_file"}})
		c.t = c.t.Add(2*time.Hour + 3*time.Minute)
		v := hs.view()
		checkScreen(t, v, size[0], size[1])
		if !strings.Contains(v, "working 2h03m · running bash") || !strings.Contains(v, "lead ctx 50%") {
			t.Fatalf("%dx%d: the lead's progress or context is missing:\n%s", size[0], size[1], v)
		}
	}
}
