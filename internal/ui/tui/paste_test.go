package tui

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func pasteMsg(s string) tea.PasteMsg {
	return tea.PasteMsg{Content: s}
}

func numberedLines(n int, prefix string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s line %d\n", prefix, i)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestLongPasteCollapsesButIsSentWhole: a 30-line paste shows as
// "[pasted 30 lines]" in the input, and the lead gets every line, with what
// was typed around it.
func TestLongPasteCollapsesButIsSentWhole(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	text := numberedLines(30, "log")
	hs.typeText("look at ")
	hs.send(pasteMsg(strings.ReplaceAll(text, "\n", "\r\n"))) // a terminal's line endings
	hs.typeText(" please")
	if v := hs.m.in.value(); v != "look at [pasted 30 lines] please" {
		t.Fatalf("the input holds %q", v)
	}
	hs.mustSee("[pasted 30 lines]")
	hs.mustNotSee("log line 2")
	hs.key(tea.KeyEnter)
	hs.flush()
	if want := "look at " + text + " please"; len(hs.eng.said) != 1 || hs.eng.said[0] != want {
		t.Fatalf("the lead got %q, want the paste whole", hs.eng.said)
	}
	if hs.m.in.value() != "" || len(hs.m.in.pastes) != 0 {
		t.Fatalf("the input kept %q and %d pastes after sending", hs.m.in.value(), len(hs.m.in.pastes))
	}
}

// TestShortPasteShowsAsIs: ten lines or fewer go into the input as they are.
func TestShortPasteShowsAsIs(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	text := numberedLines(10, "x")
	hs.send(pasteMsg(text))
	if v := hs.m.in.value(); v != text {
		t.Fatalf("a 10-line paste became %q", v)
	}
}

// TestTwoPastesEachSentWhereItWas: two long pastes of the same size get
// tokens of their own; a paste holding another's token is sent as pasted,
// and a token the person deleted takes its paste with it.
func TestTwoPastesEachSentWhereItWas(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	a := numberedLines(11, "a") + "\n[pasted 11 lines #2]" // 12 lines, naming the next token
	b := numberedLines(12, "b")
	hs.send(pasteMsg(a))
	hs.typeText(" and ")
	hs.send(pasteMsg(b))
	if v := hs.m.in.value(); v != "[pasted 12 lines] and [pasted 12 lines #2]" {
		t.Fatalf("the input holds %q", v)
	}
	hs.key(tea.KeyEnter)
	hs.flush()
	if want := a + " and " + b; len(hs.eng.said) != 1 || hs.eng.said[0] != want {
		t.Fatalf("the lead got %q,\nwant %q", hs.eng.said, want)
	}

	hs.send(pasteMsg(b))
	for range len("[pasted 12 lines]") {
		hs.key(tea.KeyBackspace)
	}
	hs.typeText("nothing")
	hs.key(tea.KeyEnter)
	hs.flush()
	if got := hs.eng.said[len(hs.eng.said)-1]; got != "nothing" {
		t.Fatalf("a deleted paste was sent: %q", got)
	}
}

// TestLongSingleLinePasteCollapses: a paste of one very long line is as
// hard to edit around as many lines.
func TestLongSingleLinePasteCollapses(t *testing.T) {
	hs := newHarness(t, 100, 30, Options{HasModel: true})
	text := strings.Repeat("0123456789", 300)
	hs.send(pasteMsg(text))
	if v := hs.m.in.value(); v != "[pasted 3000 characters]" {
		t.Fatalf("the input holds %q", v)
	}
	hs.key(tea.KeyEnter)
	hs.flush()
	if len(hs.eng.said) != 1 || hs.eng.said[0] != text {
		t.Fatal("the long line was not sent whole")
	}
}
