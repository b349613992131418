package team

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
)

// Models are the team's models: what is configured, which one each agent
// of this process talks to, what each used, and the budget they spend
// together.
type Models struct {
	models models.Models
	spend  *models.Spend // the budget's count; nil: none
	reg    RegistryDoc
	events EventSink
	lead   *models.Agent // the lead's model now, and its meter; nil in a worker
	// teammates are the meters of this process's teammates, by name.
	teammates func() []registry.AgentUsage
}

// Models are the team's models, for a person choosing the lead's and
// asking what was spent.
func (t *Team) Models() *Models { return t.meters }

// forAgent is an agent's model, counted against the team's budget.
func (ms *Models) forAgent(c models.ModelChoice, u registry.Usage) *models.Agent {
	return models.NewAgent(c, u, ms.spend)
}

// resolve is the model a teammate of role gets: the one asked for, else
// the role's, else the default.
func (ms *Models) resolve(provider, model, role string) (models.ModelChoice, error) {
	for _, f := range []struct{ what, v string }{{"model", model}, {"provider", provider}} {
		if err := models.CheckWord(f.what, f.v); err != nil {
			return models.ModelChoice{}, err
		}
	}
	if provider == "" && model == "" {
		if p, m, ok := ms.models.ForRole(role); ok {
			c, err := ms.models.Model(p, m)
			if err != nil {
				return models.ModelChoice{}, fmt.Errorf("the model of role %s: %w", role, err)
			}
			return c, nil
		}
	}
	return ms.models.Model(provider, model)
}

// resume is the model a resumed teammate had; one written before models
// were recorded gets its role's or the default.
func (ms *Models) resume(mb registry.Member) (models.ModelChoice, error) {
	if mb.ModelName == "" {
		return ms.resolve("", "", mb.Role)
	}
	c, err := ms.models.Model(mb.Provider, mb.ModelName)
	if err != nil {
		return models.ModelChoice{}, fmt.Errorf("%s talked to %s, which cannot be used now: %w", mb.Name, mb.Model, err)
	}
	return c, nil
}

// resumeLead is the model the lead last talked to, as the registry
// recorded it; one that is not configured any more (or was recorded before
// models were) leaves the lead on def, and the first is said in one sentence.
func (ms *Models) resumeLead(was registry.ModelRef, def models.ModelChoice) models.ModelChoice {
	if was.ModelName == "" || (was.Provider == def.Provider && was.ModelName == def.Name) {
		return def
	}
	err := models.CheckWord("provider", was.Provider) // the registry is a file anyone could have edited
	if err == nil {
		err = models.CheckWord("model", was.ModelName)
	}
	var c models.ModelChoice
	if err == nil {
		c, err = ms.models.Model(was.Provider, was.ModelName)
	}
	if err != nil {
		ms.events.Emit(event.Event{Agent: inbox.LeadName, Payload: failure(event.ClassModel, "resume: ",
			fmt.Errorf("the lead's model when it stopped cannot be used now (%w); it goes on with %s", err, def.Label()))})
		return def
	}
	return c
}

// SetLead switches the lead's model for its following turns. spec is
// "model" or "provider/model", checked against what is configured; it
// returns the new model's label.
func (ms *Models) SetLead(spec string) (string, error) {
	if err := models.CheckWord("model", spec); err != nil {
		return "", err
	}
	c, err := ms.models.Model("", spec)
	if err != nil {
		return "", err
	}
	// Only a model the person can see listed (the demo serves any name a
	// role gives, but offers only itself).
	cat := ms.models.Catalog()
	var labels []string
	for _, m := range cat.Models {
		labels = append(labels, m.Label)
	}
	if !slices.Contains(labels, c.Label()) {
		return "", fmt.Errorf("model %q is not configured: the configured models are %s", spec, strings.Join(labels, ", "))
	}
	ms.lead.Set(c)
	ms.writeLeadUsage()
	return c.Label(), nil
}

// Lead is the label of the lead's model now.
func (ms *Models) Lead() string { return ms.lead.Choice().Label() }

// Catalog is what is configured, for a person choosing the lead's model.
func (ms *Models) Catalog() models.Catalog { return ms.models.Catalog() }

// AnswerBudget answers the question a chat's reached budget asks: go on
// raises each bound reached by its amount again and lets the waiting calls
// go on; no stops the team as a run's budget does.
func (ms *Models) AnswerBudget(goOn bool) (string, error) { return ms.spend.Answer(goOn) }

// Usage is what the lead and the teammates of this process used so far.
func (ms *Models) Usage() registry.TeamUsage {
	agents := []registry.AgentUsage{{Agent: inbox.LeadName, Model: ms.Lead(), Usage: ms.lead.Usage()}}
	agents = append(agents, ms.teammates()...)
	// Map order is random: lead first, then by name.
	slices.SortFunc(agents[1:], func(a, b registry.AgentUsage) int { return strings.Compare(a.Agent, b.Agent) })
	return registry.SumUsage(agents)
}

// LeadUsage is what the lead used, in this process and, resumed, before.
func (ms *Models) LeadUsage() registry.Usage { return ms.lead.Usage() }

// writeLeadUsage records the lead's model and usage in the registry.
func (ms *Models) writeLeadUsage() {
	entry := registry.LeadEntry{ModelRef: modelRefOf(ms.lead.Choice()), Usage: ms.lead.Usage()}
	ctx := context.Background() // what was used is recorded whatever ended the cycle that used it
	_ = ms.reg.Change(ctx, func(c *registry.Config) error {
		if c.Lead != nil && c.Lead.Same(entry) {
			return statefile.ErrNoChange
		}
		c.Lead = &entry
		return nil
	})
}

func modelRefOf(c models.ModelChoice) registry.ModelRef {
	return registry.ModelRef{Model: c.Label(), Provider: c.Provider, ModelName: c.Name}
}

// mateUsage is the meter of each teammate r runs.
func mateUsage(r *roster) func() []registry.AgentUsage {
	return func() []registry.AgentUsage {
		var agents []registry.AgentUsage
		r.each(func(m *member) {
			if m.model != nil {
				agents = append(agents, registry.AgentUsage{Agent: m.name, Model: m.model.Choice().Label(), Usage: m.model.Usage()})
			}
		})
		return agents
	}
}
