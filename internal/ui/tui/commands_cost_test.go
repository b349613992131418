package tui

import "testing"

// /cost lists each agent's model, tokens and cost, the team's total, and
// which agents have no price.
func TestCostListsWhatEachAgentSpent(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{})
	hs.enter("/cost")
	hs.flush()
	hs.mustSee("AGENT", "lead", "test-model", "1000", "alice", "local/qwen", "team", "1500", "No price is configured for alice")
}
