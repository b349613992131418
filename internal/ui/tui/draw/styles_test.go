package draw

import (
	"testing"

	"charm.land/lipgloss/v2"
)

// widthCorpus is text a frame may hold: styled spans, wide and combined
// characters, and what a model may write (escapes, controls, bad UTF-8).
func widthCorpus() []string {
	st := NewStyles()
	c := []string{
		"", "a", "plain ascii text", "a\tb", "two\nlines", "crlf\r\nline",
		"│ ○ alice · tester … ✓ ✗ ⠋", "日本語のテキスト", "e\u0301 and a\u0308b",
		"1\ufe0f\u20e3 keycap", "👩\u200d💻 zwj", "🇫🇷 flags 🇩🇪", "\u0600a prepend",
		"x\u200by zero width", "\x1b[1mbold\x1b[m", "\x1b[38;5;12mcolour\x1b[0m",
		"\x1b]8;;http://x\x07link\x1b]8;;\x07", "\x1b[", "\x1b[12", "a\x1bb", "bell\x07",
		"del\x7f", "c1\u0085", "bad \xff utf8", "\xe6\x97", "tail é",
	}
	for _, s := range append([]string(nil), c...) {
		c = append(c, st.Who.Render(s)+st.Dim.Render(" · "+s), st.Focus.Render(s), st.Thinking.Render(s))
	}
	return c
}

// TestStylesRenderAsLipGloss: a style's Render gives Lip Gloss's bytes.
func TestStylesRenderAsLipGloss(t *testing.T) {
	st := NewStyles()
	all := []Style{st.Header, st.Dim, st.User, st.Who, st.Tool, st.OK, st.Bad, st.Note, st.ErrText, st.Focus, st.Status, st.Help, st.Key, st.Plan, st.Thinking}
	for _, s := range st.statusColor {
		all = append(all, s)
	}
	for i, s := range all {
		for _, text := range widthCorpus() {
			if got, want := s.Render(text), s.ls.Render(text); got != want {
				t.Errorf("style %d: Render(%q) = %q, Lip Gloss %q", i, text, got, want)
			}
		}
		if got, want := s.Render("a", "b"), s.ls.Render("a", "b"); got != want {
			t.Errorf("style %d: Render(a, b) = %q, Lip Gloss %q", i, got, want)
		}
	}
}

// TestCellWidthIsLipGlossWidth: the fast width is Lip Gloss's.
func TestCellWidthIsLipGlossWidth(t *testing.T) {
	for _, s := range widthCorpus() {
		if got, want := Width(s), lipgloss.Width(s); got != want {
			t.Errorf("Width(%q) = %d, lipgloss.Width %d", s, got, want)
		}
	}
}

func FuzzCellWidth(f *testing.F) {
	for _, s := range widthCorpus() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Width(s), lipgloss.Width(s); got != want {
			t.Fatalf("Width(%q) = %d, lipgloss.Width %d", s, got, want)
		}
	})
}
