package tui

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/tools"
)

func TestSpawnInPlanMode(t *testing.T) {
	hs := newHarness(t, 140, 40, Options{HasModel: true})
	hs.enter("/spawn --plan carol writer draft the docs for parse.go")
	want := tools.SpawnSpec{Name: "carol", Role: "writer", Prompt: "draft the docs for parse.go", PlanMode: true}
	if len(hs.eng.spawns) != 1 || !reflect.DeepEqual(hs.eng.spawns[0], want) {
		t.Fatalf("spawns %+v, want %+v", hs.eng.spawns, want)
	}
	hs.mustSee("spawned carol (writer) in plan mode")
	hs.enter("/spawn --plan carol writer")
	hs.mustSee("usage: /spawn [--plan] name role prompt")
	if len(hs.eng.spawns) != 1 {
		t.Fatalf("a spawn without a prompt reached the engine: %+v", hs.eng.spawns)
	}
}

func TestApproveAndRejectCommands(t *testing.T) {
	cases := []struct {
		line string
		want []review
		see  string
	}{
		{"/approve alice", []review{{"alice", true, ""}}, "reviewed alice's plan"},
		{"/approve alice looks good, go", []review{{"alice", true, "looks good, go"}}, "reviewed alice's plan"},
		{"/reject alice split it into two steps", []review{{"alice", false, "split it into two steps"}}, "reviewed alice's plan"},
		{"/reject alice", nil, "usage: /reject name feedback"},
		{"/approve", nil, "usage: /approve name [feedback]"},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			hs := newHarness(t, 140, 40, Options{HasModel: true})
			hs.enter(c.line)
			if len(hs.eng.reviews) != len(c.want) || (len(c.want) > 0 && hs.eng.reviews[0] != c.want[0]) {
				t.Fatalf("reviews %+v, want %+v", hs.eng.reviews, c.want)
			}
			hs.mustSee(c.see)
			if len(hs.eng.said) != 0 {
				t.Fatalf("the command reached the lead: %v", hs.eng.said)
			}
		})
	}
}

func TestReviewRefusalIsShown(t *testing.T) {
	hs := newHarness(t, 140, 40, Options{HasModel: true})
	hs.eng.err = errors.New("bob has no plan waiting for review")
	hs.enter("/approve bob")
	hs.mustSee("! bob has no plan waiting for review")
}

func TestShutdownCommand(t *testing.T) {
	cases := []struct {
		line string
		want [][2]string
	}{
		{"/shutdown bob", [][2]string{{"bob", engine.DefaultShutdownReason}}},
		{"/shutdown bob the tests are done", [][2]string{{"bob", "the tests are done"}}},
		{"/shutdown", nil},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			hs := newHarness(t, 140, 40, Options{HasModel: true})
			hs.enter(c.line)
			if len(hs.eng.shutdowns) != len(c.want) || (len(c.want) > 0 && hs.eng.shutdowns[0] != c.want[0]) {
				t.Fatalf("shutdowns %v, want %v", hs.eng.shutdowns, c.want)
			}
			if c.want == nil {
				hs.mustSee("usage: /shutdown name [reason]")
			} else {
				hs.mustSee("asked bob to shut down")
			}
		})
	}
}

func TestTasksCommand(t *testing.T) {
	hs := newHarness(t, 140, 40, Options{HasModel: true})
	hs.eng.tasks = "ID  STATUS   OWNER  BLOCKED BY  SUBJECT\nt1  pending  -      -           write the parser"
	hs.enter("/tasks")
	hs.mustSee("ID  STATUS", "t1  pending  -      -           write the parser")
}

func TestHelpListsProtocolCommands(t *testing.T) {
	hs := newHarness(t, 160, 50, Options{HasModel: true})
	hs.enter("/help")
	hs.mustSee("/spawn [--plan] name role prompt", "/approve name [feedback]", "/reject name feedback",
		"/shutdown name [reason]", "/tasks", "/merge name")
}

// planRequestText is what team.SubmitPlan sends the lead.
const planRequestText = "alice asks you to approve its plan (request plan-1a2b3c4d):\n\n1. read parse.go\n2. write parse_test.go\n\n" +
	`Answer with review_plan(request_id="plan-1a2b3c4d", approve=true or false, feedback=...).`

// planRequest is the request team.SubmitPlan opens for planRequestText.
var planRequest = event.RequestRef{ID: "plan-1a2b3c4d", RequestKind: event.RequestPlanApproval, From: "alice", To: "lead"}

func TestPlanRequestStandsOutUntilAnswered(t *testing.T) {
	// Each answer as the team logs it: how the request ended, and the message alice gets.
	cases := []struct {
		from, detail string
		end          event.Payload
		see          string
	}{
		{"user", "The person approved your plan: you may now change files and run any command.",
			event.RequestAnswered{RequestRef: planRequest, By: "user", Outcome: event.OutcomeApproved}, "✓ approved by you"},
		{"lead", "The lead rejected your plan. Revise it and submit_plan again.\nFeedback: smaller steps",
			event.RequestAnswered{RequestRef: planRequest, By: "lead", Outcome: event.OutcomeRejected, Reason: "smaller steps"}, "✗ rejected by the lead"},
		{"lead", "No review: the lead did not review your plan within 15m0s",
			event.RequestExpired{RequestRef: planRequest, Outcome: event.OutcomeExpired, Reason: "the lead did not review your plan within 15m0s"}, "⌛ not reviewed in time by the lead"},
	}
	for _, c := range cases {
		t.Run(c.see, func(t *testing.T) {
			hs := newHarness(t, 140, 40, Options{HasModel: true})
			hs.send(events(
				event.Event{Agent: "alice", Payload: event.RequestOpened{RequestRef: planRequest, Text: "1. read parse.go\n2. write parse_test.go"}},
				event.Event{Payload: event.MessageDelivered{From: "alice", To: "lead", Type: protocol.TypePlanApprovalRequest, Content: planRequestText}}))
			hs.mustSee("⏸ alice asks to approve a plan · plan-1a2b3c4d", "1. read parse.go", "2. write parse_test.go",
				"/approve alice [feedback]  ·  /reject alice feedback", "alice's plan awaits your approval")
			hs.mustNotSee("Answer with review_plan")
			hs.send(events(
				event.Event{Agent: "alice", Payload: c.end},
				event.Event{Payload: event.MessageDelivered{From: c.from, To: "alice", Type: protocol.TypePlanApprovalResponse, Content: c.detail}}))
			hs.mustSee(c.see, "1. read parse.go")
			hs.mustNotSee("/reject alice feedback")
			if len(hs.m.plans.open) != 0 {
				t.Fatalf("the answered plan is still open: %v", hs.m.plans.open)
			}
		})
	}
}

func TestTeamPanelShowsTeamStateAndPlans(t *testing.T) {
	hs := newHarness(t, 200, 30, Options{HasModel: true, MaxWorkers: 5})
	snap := members("alice:idle", "bob:working", "carol:idle", "dave:queued", "erin:idle")
	snap.Config.State = registry.StateExecuting
	plans := []registry.PlanState{registry.PlanAwaitingApproval, registry.PlanDrafting, registry.PlanApproved, registry.PlanDrafting, registry.PlanRejected}
	for i, p := range plans {
		snap.Config.Teammates[i].PlanMode, snap.Config.Teammates[i].PlanState = true, p
	}
	hs.send(snap)
	hs.mustSee("Team  executing · working 1/5, queued 1",
		"○ alice tester idle · ⏸ plan awaiting approval",
		"⠋ bob tester working 0s · ✎ drafting a plan · thinking",
		"○ carol tester idle · ✓ plan approved · waiting for",
		"○ erin tester idle · ↺ plan rejected")
	hs.mustNotSee("approval · waiting for messages")

	// A registry written before states existed: derived from the members.
	old := members("alice:idle", "bob:failed")
	old.Config.Teammates[0].Cycles = 1
	hs.send(old)
	hs.mustSee("Team  partial · working 0/5")
}

func TestCompletionOfProtocolCommands(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true})
	snap := members("alice:idle", "albert:idle", "bob:working")
	snap.Config.Teammates[1].PlanMode, snap.Config.Teammates[1].PlanState = true, registry.PlanAwaitingApproval
	hs.send(snap)
	cases := []struct{ typed, want string }{
		{"/appr", "/approve "},
		{"/approve a", "/approve albert "}, // the only plan waiting
		{"/reject ", "/reject albert "},
		{"/shutdown b", "/shutdown bob "},
		{"/shu", "/shutdown "},
		{"/mer", "/merge "},
		{"/merge b", "/merge bob "},
		{"/spawn -", "/spawn --plan "},
		{"/tas", "/tasks "},
	}
	for _, c := range cases {
		hs.m.in.set(c.typed)
		hs.key(tea.KeyTab)
		if v := hs.m.in.value(); v != c.want {
			t.Errorf("%q completed to %q, want %q", c.typed, v, c.want)
		}
	}
	if hs.m.focus != "" {
		t.Fatal("tab in a command moved the focus")
	}
	// With no plan waiting, every teammate is a candidate.
	hs.send(members("alice:idle", "albert:idle"))
	hs.m.in.set("/approve al")
	hs.key(tea.KeyTab)
	if v := hs.m.in.value(); v != "/approve al" || !strings.Contains(hs.view(), "albert  alice") {
		t.Fatalf("ambiguous /approve completed to %q", v)
	}
}
