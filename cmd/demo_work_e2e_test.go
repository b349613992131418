package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The offline demo's teammates do work a newcomer can see: a task
// `write FILE: TEXT` writes the file (its diff in the event log), `run:
// COMMAND` runs the command, and a teammate with a plan does its work only
// once the lead approved the plan.
func TestTheDemosTeammatesWriteFilesAndRunCommands(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "", "run", "--demo",
		"spawn alice as writer to write hello.txt: hi there; spawn bob as tester to run: echo ran > ran.txt; "+
			"spawn carol as writer with a plan to write plan.txt: planned")
	mustSucceed(t, r, "run --demo")
	for file, want := range map[string]string{"hello.txt": "hi there\n", "ran.txt": "ran\n", "plan.txt": "planned\n"} {
		if got, err := os.ReadFile(filepath.Join(ws, file)); err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", file, got, err, want)
		}
	}
	said := strings.Join(leadSaid(t, ws), "\n")
	for _, want := range []string{
		"- alice: done — ready — wrote hello.txt",
		"- bob: done — ready — ran `echo ran > ran.txt`",
		"- carol: done — plan approved — wrote plan.txt",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("the lead's answers lack %q:\n%s", want, said)
		}
	}
	// carol's plan came before her write: the approval is in the log first.
	if i, j := strings.Index(r.stderr, "carol is idle: plan approved"), strings.Index(r.stderr, "carol: write_file plan.txt"); i < 0 || j < i {
		t.Errorf("carol wrote before her plan was approved:\n%s", r.stderr)
	}
	events, err := os.ReadFile(state(ws, "events.jsonl"))
	if err != nil || !strings.Contains(string(events), "+hi there") {
		t.Errorf("the event log has no diff of alice's write (%v)", err)
	}
}
