package linechat

import (
	"bytes"
	"testing"
)

func TestThePromptComesBackAfterOutputThatInterruptedIt(t *testing.T) {
	var out bytes.Buffer
	p := &printer{w: &out}
	p.showPrompt()
	p.line("12:00:00 alice is idle") // a teammate, while the person is at the prompt
	p.text("Here is ")               // the lead, woken by a report
	p.line("12:00:01 lead: bash ls  ✓")
	p.text("what I did")
	p.endReply("")
	p.showPrompt()
	p.entered("next", true) // a pipe's line, echoed
	p.line("12:00:02 bob is working")
	want := "lead> \n12:00:00 alice is idle\nlead> \nHere is \n12:00:01 lead: bash ls  ✓\nwhat I did\nlead> next\n12:00:02 bob is working\n"
	if got := out.String(); got != want {
		t.Fatalf("output\n%q\nwant\n%q", got, want)
	}
}

func TestLeaveEndsTheLastLineWithoutAPrompt(t *testing.T) {
	var out bytes.Buffer
	p := &printer{w: &out}
	p.showPrompt()
	p.leave()
	p.line("12:00:00 alice is shutdown: the person quit")
	if got, want := out.String(), "lead> \n12:00:00 alice is shutdown: the person quit\n"; got != want {
		t.Fatalf("output %q, want %q", got, want)
	}
}

func TestAnotherAgentsLineWaitsForTheRepliesLineToEnd(t *testing.T) {
	var out bytes.Buffer
	p := &printer{w: &out}
	p.text("- spawn alice as pro")
	p.aside("12:00:00 alice is working") // a teammate, mid-line of the lead's reply
	p.aside("12:00:01 alice is idle")
	p.text("grammer: done\n- list the")
	p.aside("12:00:02 bob is working")
	p.text(" team: alice")
	p.endReply("")
	p.aside("12:00:03 alice is shutdown")
	want := "- spawn alice as programmer: done\n12:00:00 alice is working\n12:00:01 alice is idle\n" +
		"- list the team: alice\n12:00:02 bob is working\n12:00:03 alice is shutdown\n"
	if got := out.String(); got != want {
		t.Fatalf("output\n%q\nwant\n%q", got, want)
	}
}
