package tui

import "testing"

// At its budget a chat asks whether to go on: y raises the bound by as
// much again and the waiting calls go on; n stops the team.
func TestChatAsksAtItsBudgetInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	s := startTmux(t, t.TempDir())
	s.typeLine(bin + " chat --demo --max-model-calls 2")
	s.waitFor("the chat", contains("Talk to the lead"))
	s.typeLine("spawn alice as programmer")
	s.waitFor("the question", contains("⏸ the team reached its budget of 2 model calls", "y go on", "n stop the team"))
	s.run("send-keys", "-t", "e2e", "y")
	s.waitFor("the answer after going on", contains("the team goes on; its budget is now 4 model calls", "spawn alice as programmer: done"))
	s.typeLine("list team")
	s.waitFor("the question again", contains("⏸ the team reached its budget of 4 model calls"))
	s.run("send-keys", "-t", "e2e", "n")
	s.waitFor("the team stopped", contains("the team stops: its budget is spent"))
}

// In lines at a terminal the same question is answered with y or n.
func TestChatInLinesAsksAtItsBudgetInTmux(t *testing.T) {
	bin := agentteamBinary(t)
	s := startTmux(t, t.TempDir())
	s.typeLine("TERM=dumb " + bin + " chat --demo --max-model-calls 2")
	s.waitFor("the line chat", contains("lead>"))
	s.typeLine("spawn alice as programmer")
	s.waitFor("the question", contains("the team reached its budget of 2 model calls", "answer y (go on with as much again) or n (stop the team)"))
	s.typeLine("y")
	s.waitFor("the answer after going on", contains("the team goes on; its budget is now 4 model calls", "- spawn alice as programmer: done"))
	s.typeLine("list team")
	s.waitFor("the question again", contains("budget of 4 model calls"))
	s.typeLine("n")
	s.waitFor("the team stopped", contains("the team stops: its budget is spent"))
}
