package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentteam/agentteam/team/models"
)

// ModelsText lists the configured models, marking the lead's and the
// default, with prices, and the roles that have a model of their own.
func ModelsText(c models.Catalog, current string) string {
	var b strings.Builder
	b.WriteString("Models (/model NAME switches the lead's):\n")
	for _, mod := range c.Models {
		mark := "  "
		if mod.Label == current {
			mark = "▸ "
		}
		var notes []string
		if mod.Label == current {
			notes = append(notes, "the lead's")
		}
		if mod.Label == c.Default {
			notes = append(notes, "default")
		}
		if mod.Price != nil {
			notes = append(notes, fmt.Sprintf("%g in / %g out per million tokens", mod.Price.InputPerMillion, mod.Price.OutputPerMillion))
		} else {
			notes = append(notes, "no price")
		}
		fmt.Fprintf(&b, "%s%s  (%s)\n", mark, mod.Label, strings.Join(notes, ", "))
	}
	if !slices.ContainsFunc(c.Models, func(mod models.CatalogModel) bool { return mod.Label == current }) && current != "" {
		fmt.Fprintf(&b, "▸ %s  (the lead's)\n", current)
	}
	if len(c.Roles) > 0 {
		b.WriteString("Roles with a model of their own:\n")
		for _, r := range slices.Sorted(maps.Keys(c.Roles)) {
			fmt.Fprintf(&b, "  %s → %s\n", r, c.Roles[r])
		}
	}
	return strings.TrimRight(b.String(), "\n")
}
