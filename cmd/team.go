package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/models"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// TeamOptions are the inputs of `agentteam team`.
type TeamOptions struct {
	*launch.GlobalOptions
	IO  IOStreams
	Now func() time.Time
}

// newTeamCmd builds `agentteam team`; runF, when not nil, replaces runTeam.
func newTeamCmd(g *launch.GlobalOptions, io IOStreams, runF func(*TeamOptions) error) *cobra.Command {
	opts := &TeamOptions{GlobalOptions: g, IO: io, Now: time.Now}
	return &cobra.Command{
		Use:   "team",
		Short: "Show the registry: each teammate's name, role, status, turns and last activity",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runTeam(c.Context(), opts)
		},
	}
}

// teamRow is one teammate as `team --json` prints it.
type teamRow struct {
	registry.Member
	Unread int `json:"unread"`
	// InboxError says why the inbox could not be read; Unread is then unknown (0).
	InboxError string `json:"inboxError,omitempty"`
}

func runTeam(ctx context.Context, opts *TeamOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(ctx, opts.GlobalOptions, ws, natsconn.RolePerson)
	if err != nil {
		return err
	}
	defer st.Close()
	reg := st.Registry
	// The owner lock is a file of this workspace: only there can it tell a
	// dead team from one run elsewhere, so a shared store is not repaired.
	if !st.NATS {
		if err := repairDead(ctx, ws, reg); err != nil {
			return err
		}
	}
	cfg, err := reg.Read(ctx)
	if err != nil {
		return err
	}
	store := st.Mail
	rows := make([]teamRow, 0, len(cfg.Teammates))
	for _, m := range cfg.Teammates {
		row := teamRow{Member: m}
		switch st, err := store.Stats(ctx, m.Name); {
		case err != nil:
			row.InboxError = err.Error()
		case st.Broken != "":
			row.InboxError = st.Broken
		default:
			row.Unread = st.Unread
		}
		rows = append(rows, row)
	}
	if err := printTeam(opts, ws, cfg, rows); err != nil {
		return err
	}
	return brokenInboxes(opts.IO, store, rows)
}

// brokenInboxes says on stderr which teammates' inboxes could not be read
// (one sentence each) and fails the command if any: the rest is shown, but
// an unread count of 0 would hide messages nobody may ever read.
func brokenInboxes(streams IOStreams, store launch.MailStore, rows []teamRow) error {
	var broken []string
	for _, r := range rows {
		if r.InboxError != "" {
			broken = append(broken, r.Name)
			fmt.Fprintf(streams.Err, "%s's inbox %s cannot be read: %s\n", r.Name, store.Path(r.Name), r.InboxError)
		}
	}
	switch len(broken) {
	case 0:
		return nil
	case 1:
		return &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the inbox of %s is broken: its unread count is unknown", broken[0])}
	}
	return &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the inboxes of %s are broken: their unread counts are unknown", strings.Join(broken, ", "))}
}

// printTeam writes the registry with each teammate's unread count: a table, or JSON with --json.
func printTeam(opts *TeamOptions, ws *workspace.Workspace, cfg registry.Config, rows []teamRow) error {
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		var updated *time.Time // a registry never written has no time, not year 1
		if !cfg.UpdatedAt.IsZero() {
			updated = &cfg.UpdatedAt
		}
		return enc.Encode(struct {
			TeamName     string                  `json:"teamName"`
			Version      int64                   `json:"version"`
			UpdatedAt    *time.Time              `json:"updatedAt,omitempty"`
			State        string                  `json:"state"`
			Teammates    []teamRow               `json:"teammates"`
			LeadHandoffs []registry.HandoffState `json:"leadHandoffs,omitempty"`
			Lead         *registry.LeadEntry     `json:"lead,omitempty"`
			Usage        registry.TeamUsage      `json:"usage"`
			Sandbox      *registry.SandboxState  `json:"sandbox,omitempty"`
		}{cfg.TeamName, cfg.Version, updated, registry.DeriveState(cfg.Teammates), rows, cfg.LeadHandoffs, cfg.Lead, cfg.Usage(), cfg.Sandbox})
	}
	sandbox := ""
	if cfg.Sandbox != nil {
		sandbox = " · sandbox: " + cfg.Sandbox.State
	}
	if len(rows) == 0 {
		fmt.Fprintf(opts.IO.Err, "no teammates in %s yet%s\n", ws.Root, sandbox)
		if cfg.Lead != nil { // the lead alone may have spent tokens
			_, err := fmt.Fprintln(opts.IO.Out, usageLine(cfg))
			return err
		}
		return nil
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.Err, "team %s · %s · version %d · %d teammates%s\n", cfg.TeamName, registry.DeriveState(cfg.Teammates), cfg.Version, len(rows), sandbox)
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 0, 2, ' ', 0)
	branches := slices.ContainsFunc(rows, func(r teamRow) bool { return r.Branch != "" })
	branchHead := ""
	if branches {
		branchHead = "BRANCH\t"
	}
	// A team across hosts: where each teammate runs (or ran).
	workers := slices.ContainsFunc(rows, func(r teamRow) bool { return r.Worker != "" })
	if workers {
		branchHead += "WORKER\t"
	}
	fmt.Fprintln(tw, "NAME\tROLE\tSTATUS\tTURNS\tTOKENS\tUNREAD\tMODEL\tCOST\t"+branchHead+"LAST ACTIVITY")
	now := opts.Now()
	for _, r := range rows {
		status := string(r.Status)
		if r.Activity != "" && r.Status == registry.StatusWorking {
			status += " (" + cell(event.FirstLine(r.Activity, 40)) + ")"
		}
		if r.PlanMode && r.PlanState != registry.PlanApproved {
			status += " [plan " + strings.ReplaceAll(string(r.PlanState), "_", " ") + "]"
		}
		last := ago(now.Sub(r.UpdatedAt)) + " ago"
		if r.Error != "" {
			last += ": " + cell(event.FirstLine(r.Error, 60))
		}
		unread := fmt.Sprint(r.Unread)
		if r.InboxError != "" {
			unread = "broken"
		}
		cost := models.FormatCost(r.Cost)
		if branches {
			cost += "\t" + branchWords(r.Member)
		}
		if workers {
			cost += "\t" + orDash(team.WorkerPlace(r.Worker, r.Host))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\n", r.Name, cell(event.FirstLine(r.Role, 24)), status, r.Turns, r.Tokens, unread,
			orDash(cell(event.FirstLine(r.Model, 40))), cost, last)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(opts.IO.Out, usageLine(cfg))
	return err
}

// usageLine is the team's total, the lead's part in it, and who is unpriced.
func usageLine(cfg registry.Config) string {
	u := cfg.Usage()
	s := fmt.Sprintf("total: %d tokens (%d in, %d out)", u.Total.Tokens, u.Total.PromptTokens, u.Total.CompletionTokens)
	if u.Total.Cost != nil {
		s += ", cost " + models.FormatCost(u.Total.Cost)
	}
	if len(u.Unpriced) > 0 {
		s += "; no price configured for " + strings.Join(u.Unpriced, ", ")
		if u.Total.Cost != nil {
			s += " (not in the cost)"
		}
	}
	if l := cfg.Lead; l != nil {
		s += fmt.Sprintf("; lead: %s, %d tokens, cost %s", orDash(l.Model), l.Tokens, models.FormatCost(l.Cost))
	}
	return s
}

// cell is a registry field as one table cell: its control characters
// (ESC, CR, a tab that would shift the columns…) and bidirectional
// overrides shown as '?', as `requests` shows a model's text, so a hostile
// or broken registry cannot move the cursor, rewrite the screen or reverse
// the rest of the row.
func cell(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			return '?'
		}
		return r
	}, printable(s))
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// branchWords says where a teammate's branch stands: merged (and its
// worktree removed), or unmerged with its diffstat.
func branchWords(m registry.Member) string {
	switch {
	case m.Branch == "":
		return "-"
	case m.Merged && m.Worktree == "":
		return m.Branch + " (merged, removed)"
	case m.Merged:
		return m.Branch + " (merged)"
	case m.Diffstat != "":
		return m.Branch + " (unmerged: " + m.Diffstat + ")"
	}
	return m.Branch + " (unmerged)"
}

// repairDead marks teammates left queued or working as failed when no
// process holds the team's owner lock, so `team` never shows a dead teammate
// working. A workspace without a registry is left untouched: reading
// creates nothing.
func repairDead(ctx context.Context, ws *workspace.Workspace, reg *registry.Registry) error {
	if _, err := os.Stat(reg.Path()); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_, err := team.RepairOrphans(ctx, ws.TeamDir(), reg, event.NewEventLog(ws.EventsPath(), nil))
	return err
}

// ago is a short human duration: 4s, 3m, 2h, 5d.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}
