package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/permask"
	"github.com/agentteam/agentteam/internal/store/natsconn"
)

// RequestsOptions are the inputs of `agentteam requests`.
type RequestsOptions struct {
	*launch.GlobalOptions
	IO IOStreams
	// Now is the clock that says which asks are past their deadline.
	Now func() time.Time
	// All lists the abandoned asks too: those whose asking process is gone.
	All bool
}

// newRequestsCmd builds `agentteam requests`; runF, when not nil, replaces runRequests.
func newRequestsCmd(g *launch.GlobalOptions, io IOStreams, runF func(*RequestsOptions) error) *cobra.Command {
	opts := &RequestsOptions{GlobalOptions: g, IO: io, Now: time.Now}
	c := &cobra.Command{
		Use:   "requests",
		Short: "List the permission asks that wait for an answer (answer with approve or deny)",
		Long: `List the tool calls that wait for permission: who asks, which tool, the exact command or the diff
the write would make, and the request id to answer with "agentteam approve ID" or "agentteam deny ID REASON".
The team that asks may run in another terminal (agentteam chat or agentteam run --permission-delegate user).
An ask whose asking process is gone (killed, crashed) waits for nobody: it is not listed, except as
"abandoned" with --all.`,
		Args: noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runRequests(c.Context(), opts)
		},
	}
	c.Flags().BoolVar(&opts.All, "all", false, "also list the abandoned asks: those whose asking agentteam process is gone")
	return c
}

func runRequests(ctx context.Context, opts *RequestsOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(ctx, opts.GlobalOptions, ws, natsconn.RolePerson)
	if err != nil {
		return err
	}
	defer st.Close()
	all, err := permask.Open(st, opts.Now())
	if err != nil {
		return err
	}
	var asks []permask.Ask
	for _, a := range all {
		if opts.All || a.State == permask.Waiting {
			asks = append(asks, a)
		}
	}
	if opts.JSON {
		if asks == nil {
			asks = []permask.Ask{}
		}
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(asks)
	}
	if len(asks) == 0 {
		if !opts.Quiet {
			fmt.Fprintln(opts.IO.Err, "no permission asks are waiting")
		}
		return nil
	}
	for _, a := range asks {
		what := a.Command
		if what == "" {
			what = a.Path
		}
		where := ""
		if a.Worker != "" {
			where = " (on worker " + printable(a.Worker) + ")"
		}
		fmt.Fprintf(opts.IO.Out, "%s  %s%s asks %s: %s %s\n", printable(a.RequestID), a.Agent, where, a.To, printable(a.Tool), printable(what))
		if a.State == permask.Abandoned {
			fmt.Fprintf(opts.IO.Out, "    abandoned: the agentteam process that asked is gone (asked at %s); nobody waits for an answer\n", a.AskedAt.Local().Format("15:04:05"))
		} else {
			fmt.Fprintf(opts.IO.Out, "    why: %s; waits until %s\n", printable(a.Why), a.Deadline.Local().Format("15:04:05"))
		}
		if a.Diff != "" {
			for _, line := range strings.Split(strings.TrimRight(a.Diff, "\n"), "\n") {
				fmt.Fprintln(opts.IO.Out, "    "+printable(line))
			}
		}
	}
	return nil
}

// printable shows control characters of a model's text as escapes, so a
// hostile command or file cannot move the person's cursor or rewrite the
// screen (an ESC sequence could hide the real command behind a harmless one).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) && r != 0x7f {
			return r
		}
		return '?'
	}, s)
}
