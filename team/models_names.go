package team

import (
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/models"
)

// The models, their prices and the budget live in team/models; these
// names keep the team's API for its callers while they move to that
// package's own.

//go:fix inline
type (
	Models       = models.Models
	ModelChoice  = models.ModelChoice
	Price        = models.Price
	Catalog      = models.Catalog
	CatalogModel = models.CatalogModel
	Budget       = models.Budget
	BudgetError  = models.BudgetError
)


// OneModel is a team with a single model (models.OneModel).
//
//go:fix inline
func OneModel(m llm.Model, name string) models.Models { return models.OneModel(m, name) }

// AskText is the sentence that asks the person whether to go on (models.AskText).
//
//go:fix inline
func AskText(err error) string { return models.AskText(err) }

// FormatCost writes a cost for people (models.FormatCost).
//
//go:fix inline
func FormatCost(c *float64) string { return models.FormatCost(c) }
