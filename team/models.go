package team

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
)

// newAgentModel is an agent's model, counted against the team's budget.
func (t *Team) newAgentModel(c models.ModelChoice, u registry.Usage) *models.Agent {
	return models.NewAgent(c, u, t.spend)
}

// resolveModel is the model a teammate of role gets: the one asked for,
// else the role's, else the default.
func (t *Team) resolveModel(provider, model, role string) (models.ModelChoice, error) {
	for _, f := range []struct{ what, v string }{{"model", model}, {"provider", provider}} {
		if err := models.CheckWord(f.what, f.v); err != nil {
			return models.ModelChoice{}, err
		}
	}
	if provider == "" && model == "" {
		if p, m, ok := t.models.ForRole(role); ok {
			c, err := t.models.Model(p, m)
			if err != nil {
				return models.ModelChoice{}, fmt.Errorf("the model of role %s: %w", role, err)
			}
			return c, nil
		}
	}
	return t.models.Model(provider, model)
}

// SetLeadModel switches the lead's model for its following turns. spec is
// "model" or "provider/model", checked against what is configured; it
// returns the new model's label.
func (t *Team) SetLeadModel(spec string) (string, error) {
	if err := models.CheckWord("model", spec); err != nil {
		return "", err
	}
	c, err := t.models.Model("", spec)
	if err != nil {
		return "", err
	}
	// Only a model the person can see listed (the demo serves any name a
	// role gives, but offers only itself).
	cat := t.models.Catalog()
	var labels []string
	for _, m := range cat.Models {
		labels = append(labels, m.Label)
	}
	if !slices.Contains(labels, c.Label()) {
		return "", fmt.Errorf("model %q is not configured: the configured models are %s", spec, strings.Join(labels, ", "))
	}
	t.leadModel.Set(c)
	t.writeLeadUsage()
	return c.Label(), nil
}

// LeadModel is the label of the lead's model now.
func (t *Team) LeadModel() string { return t.leadModel.Choice().Label() }

// Models is what is configured, for a person choosing the lead's model.
func (t *Team) Models() models.Catalog { return t.models.Catalog() }

// AnswerBudget answers the question a chat's reached budget asks: go on
// raises each bound reached by its amount again and lets the waiting calls
// go on; no stops the team as a run's budget does.
func (t *Team) AnswerBudget(goOn bool) (string, error) { return t.spend.Answer(goOn) }
