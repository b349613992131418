package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/protocol"
	"github.com/agentteam/agentteam/team/registry"
)

// The offline demo walks through both protocols: alice plans, the lead
// approves, alice reports, and only then is she shut down.
func TestDemoPlanApprovalAndShutdown(t *testing.T) {
	ws := t.TempDir()
	r := runBin(t, ws, nil, "", "run", "--demo", "spawn alice as writer with a plan; shutdown alice")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	// stdout is the lead's last answer: its summary, or (when the shutdown's
	// answer woke it once more) its report of that answer.
	if !strings.Contains(r.stdout, "shut down alice: done") && !strings.Contains(r.stdout, "alice answers the shutdown request") {
		t.Errorf("the final answer says nothing of the shutdown:\n%s", r.stdout)
	}
	for _, want := range []string{"alice → lead (plan_approval_request)", "lead → alice (plan_approval_response)",
		"lead → alice (shutdown_request)", "alice is shutdown"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("progress lacks %q:\n%s", want, r.stderr)
		}
	}

	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))
	lead, _, err := store.ReadAll(t.Context(), "lead")
	if err != nil {
		t.Fatal(err)
	}
	var planID string
	var types []inbox.MessageType
	workReported := false
	for _, m := range lead {
		types = append(types, m.Type)
		switch m.Type {
		case protocol.TypePlanApprovalRequest:
			planID = m.CorrelationID
		case "result":
			workReported = workReported || strings.Contains(m.Content, "plan approved — done")
		case protocol.TypeShutdownResponse:
			var p struct {
				Approve bool   `json:"approve"`
				By      string `json:"by"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil || !p.Approve || p.By != "runtime" {
				t.Fatalf("shutdown response %s (%v): want approved by the runtime for the idle alice", m.Payload, err)
			}
		}
	}
	// The plan first, the shutdown's answer last, the work reported between
	// (with the plan's own result, or in one result when the approval came
	// within alice's first cycle).
	if len(types) < 3 || types[0] != protocol.TypePlanApprovalRequest || types[len(types)-1] != protocol.TypeShutdownResponse ||
		!workReported || planID == "" {
		t.Fatalf("lead's inbox %v (work reported %v, plan request %q)", types, workReported, planID)
	}

	alice, _, err := store.ReadAll(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	var approved, asked bool
	for _, m := range alice {
		switch m.Type {
		case protocol.TypePlanApprovalResponse:
			var p struct {
				Approve bool `json:"approve"`
			}
			approved = m.CorrelationID == planID && json.Unmarshal(m.Payload, &p) == nil && p.Approve
		case protocol.TypeShutdownRequest:
			asked = true
		}
	}
	if !approved || !asked {
		t.Fatalf("alice's inbox: approval of %s %v, shutdown request %v: %+v", planID, approved, asked, alice)
	}

	r = runBin(t, ws, nil, "", "team", "--json")
	var cfg struct {
		State     string
		Teammates []registry.Member
	}
	if err := json.Unmarshal([]byte(r.stdout), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Teammates) != 1 {
		t.Fatalf("team: %s", r.stdout)
	}
	a := cfg.Teammates[0]
	if a.Status != registry.StatusShutdown || !a.PlanMode || a.PlanState != registry.PlanApproved || cfg.State != registry.StateCompleted {
		t.Fatalf("team --json: state %s, alice %+v", cfg.State, a)
	}
}
