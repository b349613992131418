package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/team/registry"
)

// InboxOptions are the inputs of `agentteam inbox`.
type InboxOptions struct {
	*launch.GlobalOptions
	IO   IOStreams
	Name string
}

// newInboxCmd builds `agentteam inbox`; runF, when not nil, replaces runInbox.
func newInboxCmd(g *launch.GlobalOptions, io IOStreams, runF func(*InboxOptions) error) *cobra.Command {
	opts := &InboxOptions{GlobalOptions: g, IO: io}
	return &cobra.Command{
		Use:   "inbox [NAME]",
		Short: "List inboxes with unread and total counts, or show one inbox's messages (never marks them read)",
		Args:  maxArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Name = args[0]
			}
			if runF != nil {
				return runF(opts)
			}
			return runInbox(c.Context(), opts)
		},
	}
}

// inboxRow is one inbox as `inbox --json` prints it.
type inboxRow struct {
	Name   string `json:"name"`
	Unread int    `json:"unread"`
	Total  int    `json:"total"`
	Bad    int    `json:"bad,omitempty"`
	Broken string `json:"broken,omitempty"` // why the inbox cannot be read or trusted
}

func runInbox(ctx context.Context, opts *InboxOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(ctx, opts.GlobalOptions, ws, natsconn.RolePerson)
	if err != nil {
		return err
	}
	defer st.Close()
	store := st.Mail
	if opts.Name == "" {
		return listInboxes(ctx, opts, store)
	}
	if err := inbox.ValidateName(opts.Name); err != nil {
		return exit.Usagef("%v", err)
	}
	if err := checkInboxName(ctx, st.Registry, store, opts.Name); err != nil {
		return err
	}
	msgs, bad, err := store.ReadAll(ctx, opts.Name)
	if err != nil {
		return err
	}
	if opts.JSON {
		if msgs == nil {
			msgs = []inbox.Message{}
		}
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(msgs)
	}
	stats, err := store.Stats(ctx, opts.Name)
	if err != nil {
		return err
	}
	if !opts.Quiet {
		fmt.Fprintf(opts.IO.Err, "inbox %s: %d messages, %d unread\n", opts.Name, stats.Total, stats.Unread)
	}
	if stats.Broken != "" {
		fmt.Fprintf(opts.IO.Err, "broken: %s\n", stats.Broken)
	}
	for _, m := range msgs {
		head := fmt.Sprintf("%s  %s → %s  [%s]", m.Timestamp.Local().Format("2006-01-02 15:04:05"), m.From, m.To, m.Type)
		fmt.Fprintln(opts.IO.Out, head)
		for _, line := range strings.Split(strings.TrimRight(m.Content, "\n"), "\n") {
			fmt.Fprintln(opts.IO.Out, "    "+line)
		}
	}
	for _, b := range bad {
		fmt.Fprintf(opts.IO.Err, "set aside: line at byte %d: %s\n", b.Offset, b.Reason)
	}
	return nil
}

// checkInboxName refuses a name that is neither the lead, a teammate the
// registry knows, nor an inbox on disk: "0 messages" would hide a typo.
func checkInboxName(ctx context.Context, reg *registry.Registry, store launch.MailStore, name string) error {
	if name == inbox.LeadName {
		return nil
	}
	names, err := store.Names(ctx)
	if err != nil {
		return err
	}
	for _, n := range names {
		if n == name {
			return nil
		}
	}
	c, err := reg.Read(ctx)
	if err != nil {
		return err
	}
	known := []string{inbox.LeadName}
	for _, m := range c.Teammates {
		if m.Name == name {
			return nil
		}
		known = append(known, m.Name)
	}
	return &exit.Error{Code: exit.Failure, Err: fmt.Errorf("no agent named %s has an inbox here: the agents are %s", name, strings.Join(known, ", "))}
}

func listInboxes(ctx context.Context, opts *InboxOptions, store launch.MailStore) error {
	names, err := store.Names(ctx)
	if err != nil {
		return err
	}
	rows := make([]inboxRow, 0, len(names))
	var broken []string
	for _, n := range names {
		st, err := store.Stats(ctx, n)
		if err != nil {
			st = inbox.Stats{Broken: err.Error()} // shown with the others, not hiding them
		}
		if st.Broken != "" {
			broken = append(broken, n)
		}
		rows = append(rows, inboxRow{Name: n, Unread: st.Unread, Total: st.Total, Bad: st.Bad, Broken: st.Broken})
	}
	if err := printInboxes(opts, rows); err != nil {
		return err
	}
	switch len(broken) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("1 inbox is broken: %s", broken[0])
	default:
		return fmt.Errorf("%d inboxes are broken: %s", len(broken), strings.Join(broken, ", "))
	}
}

func printInboxes(opts *InboxOptions, rows []inboxRow) error {
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(opts.IO.Err, "no inboxes yet")
		return nil
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tUNREAD\tTOTAL")
	for _, r := range rows {
		if r.Broken != "" {
			continue
		}
		total := fmt.Sprint(r.Total)
		if r.Bad > 0 {
			total += fmt.Sprintf(" (+%d set aside)", r.Bad)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Name, r.Unread, total)
	}
	// Broken ones last: a row without counts would split the columns above.
	for _, r := range rows {
		if r.Broken != "" {
			fmt.Fprintf(tw, "%s\tbroken: %s\n", r.Name, r.Broken)
		}
	}
	return tw.Flush()
}
