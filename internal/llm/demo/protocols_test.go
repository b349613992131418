package demo

import (
	"strings"
	"testing"
)

var (
	leadProtocolTools = append(append([]string(nil), leadTools...), "shutdown_teammate", "review_plan")
	planTeammateTools = append(append([]string(nil), teammateTools...), "respond_shutdown", "submit_plan")
)

// protocol is an inbox block of a protocol message, with its request id.
func protocol(from, typ, correlation, content string) string {
	return `<message from="` + from + `" type="` + typ + `" id="01K" correlation_id="` + correlation + `">` + "\n" + content + "\n</message>"
}

const planRequest = "alice asks you to approve its plan (request plan-1a2b3c4d):\n\n1. read the task\n2. do it\n3. report\n\n" +
	`Answer with review_plan(request_id="plan-1a2b3c4d", approve=true or false, feedback=...).`

func TestLeadProtocolPhrases(t *testing.T) {
	tests := []struct {
		prompt string
		tool   string
		args   map[string]any
	}{
		{"spawn alice as writer with a plan", "spawn_teammate",
			map[string]any{"name": "alice", "role": "writer", "prompt": defaultSpawnPrompt, "plan_mode": true}},
		{"Spawn bob as senior tester With A Plan to check parse.go", "spawn_teammate",
			map[string]any{"name": "bob", "role": "senior tester", "prompt": "check parse.go", "plan_mode": true}},
		{"shutdown carol", "shutdown_teammate", map[string]any{"name": "carol", "reason": shutdownReason}},
		{"Shut down carol", "shutdown_teammate", map[string]any{"name": "carol", "reason": shutdownReason}},
	}
	both(t, func(t *testing.T, stream bool) {
		for _, tt := range tests {
			tr := ask(t, "lead", stream, conv(leadProtocolTools, sys("You are the lead."), user(tt.prompt)))
			oneCall(t, tr, tt.tool, tt.args)
		}
	})
}

func TestLeadApprovesAPlanOnce(t *testing.T) {
	both(t, func(t *testing.T, stream bool) {
		req := conv(leadProtocolTools, sys("lead"), user("list team"), said("nobody yet"),
			user(protocol("alice", "plan_approval_request", "plan-1a2b3c4d", planRequest)))
		tr := ask(t, "lead", stream, req)
		oneCall(t, tr, "review_plan", map[string]any{"request_id": "plan-1a2b3c4d", "approve": true, "feedback": "Looks good; go ahead."})
		req = then(req, tr, "Approved alice's plan; it may now change things.")
		tr = ask(t, "lead", stream, req)
		if len(tr.calls) != 0 {
			t.Fatalf("a second call after the review: %+v", tr.calls)
		}
		for _, want := range []string{"alice asks to approve a plan (plan-1a2b3c4d)", "reviewed plan plan-1a2b3c4d: Approved alice's plan"} {
			if !strings.Contains(tr.content, want) {
				t.Errorf("answer lacks %q:\n%s", want, tr.content)
			}
		}
	})
}

func TestLeadWithoutReviewToolLeavesPlans(t *testing.T) {
	tr := ask(t, "lead", false, conv(leadTools, sys("lead"), user("list team"), said("nobody yet"),
		user(protocol("alice", "plan_approval_request", "plan-1a2b3c4d", planRequest))))
	if len(tr.calls) != 0 || !strings.Contains(tr.content, "alice asks to approve a plan") {
		t.Fatalf("got %+v", tr)
	}
}

// The whole of "spawn alice as writer with a plan; shutdown alice", as the
// team would feed it to the lead: the shutdown waits for alice's work.
func TestLeadShutsDownOnlyAfterTheWork(t *testing.T) {
	both(t, func(t *testing.T, stream bool) {
		req := conv(leadProtocolTools, sys("lead"), user("spawn alice as writer with a plan; shutdown alice"))
		tr := ask(t, "lead", stream, req)
		oneCall(t, tr, "spawn_teammate", map[string]any{"name": "alice", "role": "writer", "prompt": defaultSpawnPrompt, "plan_mode": true})
		req = then(req, tr, "Spawned teammate alice (writer) in plan mode")

		tr = ask(t, "lead", stream, req)
		if len(tr.calls) != 0 || !strings.Contains(tr.content, "spawn alice as writer with a plan: done") ||
			!strings.Contains(tr.content, "I will shut down alice once alice has reported its work.") {
			t.Fatalf("want the turn to end waiting for alice, got %+v", tr)
		}
		req = then(req, tr)

		// Her plan arrives: approved at once, and the shutdown still waits.
		req.Messages = append(req.Messages, user(protocol("alice", "plan_approval_request", "plan-1a2b3c4d", planRequest)))
		tr = ask(t, "lead", stream, req)
		oneCall(t, tr, "review_plan", map[string]any{"request_id": "plan-1a2b3c4d", "approve": true, "feedback": "Looks good; go ahead."})
		req = then(req, tr, "Approved alice's plan; it may now change things.")
		tr = ask(t, "lead", stream, req)
		if len(tr.calls) != 0 || !strings.Contains(tr.content, "reviewed plan plan-1a2b3c4d") || !strings.Contains(tr.content, "I will shut down alice") {
			t.Fatalf("after the review: %+v", tr)
		}
		req = then(req, tr)

		// Her first result is the plan's; the second is the work.
		req.Messages = append(req.Messages, user(inbox("alice", "result", "alice (writer): plan submitted, waiting for the lead's approval")))
		tr = ask(t, "lead", stream, req)
		if len(tr.calls) != 0 || !strings.Contains(tr.content, "alice: done — plan submitted") {
			t.Fatalf("after the plan's result: %+v", tr)
		}
		req = then(req, tr)
		req.Messages = append(req.Messages, user(inbox("alice", "result", "alice (writer): plan approved — done: "+defaultSpawnPrompt)))
		tr = ask(t, "lead", stream, req)
		oneCall(t, tr, "shutdown_teammate", map[string]any{"name": "alice", "reason": shutdownReason})
		req = then(req, tr, "Asked alice to shut down (request shutdown-9f8e7d6c).")

		// What is new: her work, and the shutdown it let go on.
		tr = ask(t, "lead", stream, req)
		if want := "- alice: done — plan approved — done: " + defaultSpawnPrompt + "\n- shut down alice: done"; tr.content != want {
			t.Errorf("got %q, want %q", tr.content, want)
		}
		req = then(req, tr)

		req.Messages = append(req.Messages, user(protocol("alice", "shutdown_response", "shutdown-9f8e7d6c",
			"alice was idle, so the runtime approved the shutdown for it.")))
		tr = ask(t, "lead", stream, req)
		if want := "- alice answers the shutdown request: alice was idle, so the runtime approved the shutdown for it."; tr.content != want || len(tr.calls) != 0 {
			t.Fatalf("got %+v, want %q", tr, want)
		}
	})
}

func TestLeadShutsDownAtOnceWhenNotSpawnedInThePrompt(t *testing.T) {
	tr := ask(t, "lead", false, conv(leadProtocolTools, sys("lead"), user("spawn alice as coder"), said("done"), user("shutdown alice")))
	oneCall(t, tr, "shutdown_teammate", map[string]any{"name": "alice", "reason": shutdownReason})
}

const writerSystem = "You are a teammate.\nYour name: alice\nYour role: writer\nTeam lead: lead"

func TestPlanModeTeammateSubmitsThenWorks(t *testing.T) {
	both(t, func(t *testing.T, stream bool) {
		req := conv(planTeammateTools, sys(writerSystem), user(inbox("lead", "message", "write notes.txt")))
		tr := ask(t, "alice", stream, req)
		oneCall(t, tr, "submit_plan", map[string]any{"plan": "1. read the task: write notes.txt\n2. do it\n3. report to the lead"})
		req = then(req, tr, "Plan submitted (request plan-1a2b3c4d). End your turn now.")
		tr = ask(t, "alice", stream, req)
		if want := "alice (writer): plan submitted, waiting for the lead's approval"; tr.content != want || len(tr.calls) != 0 {
			t.Fatalf("got %+v, want %q", tr, want)
		}
		req = then(req, tr)

		approved := req
		approved.Messages = append(append(approved.Messages[:0:0], req.Messages...), user(protocol("lead", "plan_approval_response", "plan-1a2b3c4d",
			"The lead approved your plan: you may now change files and run any command.\nFeedback: go")))
		tr = ask(t, "alice", stream, approved)
		if want := "alice (writer): plan approved — done: write notes.txt"; tr.content != want || len(tr.calls) != 0 {
			t.Fatalf("got %+v, want %q", tr, want)
		}

		rejected := req
		rejected.Messages = append(append(rejected.Messages[:0:0], req.Messages...), user(protocol("lead", "plan_approval_response", "plan-1a2b3c4d",
			"The lead rejected your plan. Revise it and submit_plan again.\nFeedback: smaller steps")))
		tr = ask(t, "alice", stream, rejected)
		if len(tr.calls) != 1 || tr.calls[0].Function.Name != "submit_plan" || !strings.Contains(tr.calls[0].Function.Arguments, "smaller steps") {
			t.Fatalf("want a revised plan, got %+v", tr)
		}
		rejected = then(rejected, tr, "Plan submitted (request plan-5e6f7a8b).")
		tr = ask(t, "alice", stream, rejected)
		if want := "alice (writer): plan rejected — revised plan submitted"; tr.content != want {
			t.Fatalf("got %q, want %q", tr.content, want)
		}
	})
}

func TestTeammateApprovesAShutdownRequest(t *testing.T) {
	both(t, func(t *testing.T, stream bool) {
		req := conv(planTeammateTools, sys(writerSystem), user(inbox("lead", "message", "write notes.txt")), said("ok"),
			user(protocol("lead", "shutdown_request", "shutdown-9f8e7d6c", "The lead asks you to shut down: done")))
		tr := ask(t, "alice", stream, req)
		oneCall(t, tr, "respond_shutdown", map[string]any{"request_id": "shutdown-9f8e7d6c", "approve": true})
		req = then(req, tr, "Shutdown approved: you stop at the end of this turn.")
		tr = ask(t, "alice", stream, req)
		if want := "alice (writer): shutting down as asked"; tr.content != want {
			t.Fatalf("got %q, want %q", tr.content, want)
		}
	})
}

// A teammate that got the approval within its first cycle reports plan and
// work at once: one result is enough.
func TestLeadShutsDownAfterOneCombinedReport(t *testing.T) {
	req := conv(leadProtocolTools, sys("lead"), user("spawn alice as writer with a plan; shutdown alice"))
	tr := ask(t, "lead", false, req)
	req = then(req, tr, "Spawned teammate alice (writer) in plan mode")
	tr = ask(t, "lead", false, req)
	req = then(req, tr)
	req.Messages = append(req.Messages, user(protocol("alice", "plan_approval_request", "plan-1a2b3c4d", planRequest)))
	tr = ask(t, "lead", false, req)
	req = then(req, tr, "Approved alice's plan; it may now change things.")
	tr = ask(t, "lead", false, req)
	req = then(req, tr)
	req.Messages = append(req.Messages, user(inbox("alice", "result",
		"alice (writer): plan submitted, waiting for the lead's approval; plan approved — done: "+defaultSpawnPrompt)))
	tr = ask(t, "lead", false, req)
	oneCall(t, tr, "shutdown_teammate", map[string]any{"name": "alice", "reason": shutdownReason})
}
