package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
)

func testCatalog() models.Catalog {
	return models.Catalog{
		Default: "cheap/small",
		Models: []models.CatalogModel{
			{Label: "cheap/small", Price: &models.Price{InputPerMillion: 1, OutputPerMillion: 2}},
			{Label: "smart/big", Price: &models.Price{InputPerMillion: 10, OutputPerMillion: 20}},
			{Label: "local/free"},
		},
		Roles: map[string]string{"reviewer": "smart/big"},
	}
}

func TestModelCommandListsAndSwitchesTheLeadsModel(t *testing.T) {
	hs := newHarness(t, 140, 40, Options{HasModel: true, ModelName: "cheap/small"})
	hs.eng.catalog, hs.eng.leadModel = testCatalog(), "cheap/small"

	hs.enter("/model")
	hs.mustSee("▸ cheap/small  (the lead's, default, 1 in / 2 out per million tokens)",
		"smart/big  (10 in / 20 out per million tokens)", "local/free  (no price)", "reviewer → smart/big")

	hs.enter("/model big")
	if hs.eng.leadModel != "smart/big" {
		t.Fatalf("the engine's lead model is %q after /model big, want smart/big", hs.eng.leadModel)
	}
	if hs.m.opts.ModelName != "smart/big" {
		t.Fatalf("the status line names %q, want smart/big", hs.m.opts.ModelName)
	}
	hs.mustSee("smart/big · ", "the lead talks to smart/big from its next turn")

	hs.enter("/model gpt-5-ultra")
	hs.mustSee(`model "gpt-5-ultra" is not configured`)
	if hs.eng.leadModel != "smart/big" || hs.m.opts.ModelName != "smart/big" {
		t.Fatalf("a refused /model changed the model: engine %q, screen %q", hs.eng.leadModel, hs.m.opts.ModelName)
	}

	hs.enter("/model two words")
	hs.mustSee("usage: /model [provider/]name")
	if len(hs.eng.said) != 0 {
		t.Fatalf("/model reached the lead: %v", hs.eng.said)
	}
}

func TestModelCommandCompletes(t *testing.T) {
	hs := newHarness(t, 120, 30, Options{HasModel: true, ModelLabels: []string{"cheap/small", "cheap/small-2", "smart/big"}})
	hs.m.in.set("/model sm")
	hs.key(tea.KeyTab)
	if v := hs.m.in.value(); v != "/model smart/big " {
		t.Fatalf("completed to %q, want /model smart/big", v)
	}
	hs.m.in.set("/model cheap/s")
	hs.key(tea.KeyTab)
	if v := hs.m.in.value(); v != "/model cheap/small" {
		t.Fatalf("ambiguous model completed to %q, want the common prefix", v)
	}
	hs.mustSee("cheap/small  cheap/small-2")
}

func TestTeamPanelShowsModelsAndCosts(t *testing.T) {
	hs := newHarness(t, 200, 30, Options{HasModel: true, MaxWorkers: 5, ModelName: "cheap/small"})
	snap := members("alice:working", "bob:idle", "carol:idle")
	cost, leadCost := 0.012, 0.0034
	a := &snap.Config.Teammates[0]
	a.Model, a.Turns, a.Tokens, a.Cost = "smart/big", 2, 1200, &cost
	b := &snap.Config.Teammates[1]
	b.Model, b.Tokens = "local/free", 800 // no price: tokens, no cost
	// The registry's lead entry may be an earlier run's: the panel names the model this process runs.
	snap.Config.Lead = &registry.LeadEntry{ModelRef: registry.ModelRef{Model: "earlier/model"}, Usage: registry.Usage{Tokens: 500, Cost: &leadCost}}
	snap.LeadTokens = 500
	hs.send(snap)
	// Too wide for the panel with all: the turns and what alice does give way.
	hs.mustSee("⠋ alice tester working · smart/big · 1.2k tok · cost 0.012",
		"○ bob tester idle · local/free · 800 tok",
		"lead · cheap/small idle · 500 tok · cost 0.0034",
		"cost 0.015") // the team's, in the status line
	hs.mustNotSee("800 tok · cost", "earlier/model")

	// Given the room, everything shows.
	if row := colourless(hs.m.team.Row(hs.m.st, *a, 200)); !strings.Contains(row, "working 0s · thinking · smart/big · 2 turns · 1.2k tok · cost 0.012") {
		t.Fatalf("a wide row: %q", row)
	}
}
