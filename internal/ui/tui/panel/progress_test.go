package panel

import "testing"

func TestContextWindowLookup(t *testing.T) {
	for label, want := range map[string]int{
		"gpt-4o-mini":          128_000,
		"openai/gpt-4.1-mini":  1_047_576,
		"gpt-4":                8_192,
		"x/claude-opus-4":      200_000,
		"local/some-new-model": defaultContextWindow,
		"":                     defaultContextWindow,
	} {
		if got := contextWindow(label); got != want {
			t.Errorf("contextWindow(%q) = %d, want %d", label, got, want)
		}
	}
}
