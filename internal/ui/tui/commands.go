package tui

import (
	"fmt"
	"sort"
	"strings"

	"github.com/agentteam/agentteam/internal/ui/engine"
)

// helpText lists the commands; keysText the keys.
func helpText() string {
	var b strings.Builder
	b.WriteString("Commands (tab completes):\n")
	for _, c := range engine.Commands() {
		fmt.Fprintf(&b, "  %-32s  %s\n", strings.TrimSpace(c.Name+" "+c.Args), c.Help) // two spaces: the gap a wrapped row hangs at
	}
	// The keys are ?'s: with them /help no longer fits a 50-row screen.
	b.WriteString("? (with the input empty) lists the keys.")
	return b.String()
}

// keysText lists every key; ? shows it (the help bar says esc closes it).
func keysText() string {
	var b strings.Builder
	for _, k := range allKeys {
		fmt.Fprintf(&b, "  %-18s  %s\n", k[0], k[1]) // two spaces: the gap a wrapped row hangs at
	}
	return strings.TrimRight(b.String(), "\n")
}

// complete finishes a slash command or a teammate's name at the end of the
// input; it returns the new input and the candidates when more than one fits.
// planNames are the teammates whose plan waits for review, the ones /approve
// and /reject are for; models are the configured models /model takes.
func complete(value string, names, planNames, models []string) (string, []string) {
	if !strings.HasPrefix(value, "/") || strings.Contains(value, "\n") {
		return value, nil
	}
	fields := strings.Split(value, " ")
	switch len(fields) {
	case 1:
		var cands []string
		for _, c := range engine.Commands() {
			if strings.HasPrefix(c.Name, strings.ToLower(fields[0])) {
				cands = append(cands, c.Name)
			}
		}
		return completeWord(value, fields[0], cands, "")
	case 2:
		cands := argCandidates(fields[0], names, planNames, models)
		var fit []string
		for _, c := range cands {
			if strings.HasPrefix(c, fields[1]) {
				fit = append(fit, c)
			}
		}
		return completeWord(value, fields[1], fit, fields[0]+" ")
	}
	return value, nil
}

// argCandidates are the words a command's first argument can be: the
// teammates for the commands that take a name, on/off for switches…
// planNames are the teammates whose plan waits for review, the ones
// /approve and /reject are for; models are the configured models.
func argCandidates(cmd string, names, planNames, models []string) []string {
	switch strings.ToLower(cmd) {
	case "/send", "/inbox", "/focus":
		return append([]string{"lead"}, names...)
	case "/auto", "/reasoning", "/mouse":
		return []string{"on", "off"}
	case "/shutdown", "/merge", "/diff":
		return names
	case "/approve", "/reject":
		if len(planNames) == 0 {
			return names
		}
		return planNames
	case "/spawn":
		return []string{engine.PlanFlag}
	case "/model":
		return models
	}
	return nil
}

func completeWord(value, word string, cands []string, before string) (string, []string) {
	switch len(cands) {
	case 0:
		return value, nil
	case 1:
		return before + cands[0] + " ", nil
	}
	sort.Strings(cands)
	p := cands[0]
	for _, c := range cands[1:] {
		for !strings.HasPrefix(c, p) {
			p = p[:len(p)-1]
		}
	}
	if len(p) > len(word) {
		return before + p, cands
	}
	return value, cands
}
