package cmd

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/worktree"
)

// MergeOptions are the inputs of `agentteam merge`.
type MergeOptions struct {
	*launch.GlobalOptions
	IO   IOStreams
	Name string
}

// newMergeCmd builds `agentteam merge`; runF, when not nil, replaces runMerge.
func newMergeCmd(g *launch.GlobalOptions, streams IOStreams, runF func(*MergeOptions) error) *cobra.Command {
	opts := &MergeOptions{GlobalOptions: g, IO: streams}
	return &cobra.Command{
		Use:   "merge NAME",
		Short: "Merge a teammate's branch (agentteam/NAME) into the workspace's branch",
		Long: `Merge the branch of a teammate spawned with isolation worktree into the branch checked out in the
workspace, with a merge commit (--no-ff); the teammate's uncommitted work is committed on its branch first.
Your tree must have no uncommitted changes to tracked files. On a conflict the merge is aborted (your tree is
left as it was), the conflicting files are listed, the teammate is sent a message asking it to resolve them
on its branch, and the command exits 1: merge again once it has.`,
		Args: exactName("merge"),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Name = args[0]
			if runF != nil {
				return runF(opts)
			}
			return runMerge(c, opts)
		},
	}
}

// exactName takes one argument, a teammate's name.
func exactName(cmd string) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if len(args) != 1 {
			return exit.Usagef("%s needs one teammate's name: agentteam %s NAME", cmd, cmd)
		}
		if err := inbox.ValidateTeammateName(args[0]); err != nil {
			return exit.Usagef("%v", err)
		}
		return nil
	}
}

func runMerge(c *cobra.Command, opts *MergeOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(c.Context(), opts.GlobalOptions, ws, natsconn.RolePerson)
	if err != nil {
		return err
	}
	defer st.Close()
	events := st.Events(ws, nil)
	store := st.Mail
	wts := worktree.New(ws, st.Registry, events)
	// A conflict goes to the teammate's inbox from the person: it reads it
	// now if its team runs, or when the team is resumed.
	notify := func(text string) error {
		m, err := store.Append(c.Context(), opts.Name, inbox.Message{Type: inbox.TypeMessage, From: inbox.UserName, To: opts.Name, Content: text})
		if err == nil {
			events.Emit(event.Event{Payload: event.Delivered(m)})
		}
		return err
	}
	rep, err := wts.Merge(c.Context(), opts.Name, notify)
	if err != nil {
		return &exit.Error{Code: exit.Failure, Err: err}
	}
	if opts.JSON {
		if err := json.NewEncoder(opts.IO.Out).Encode(mergeJSON(rep)); err != nil {
			return err
		}
	} else if len(rep.Conflicts) == 0 {
		fmt.Fprintln(opts.IO.Out, rep.Text())
	}
	if len(rep.Conflicts) > 0 {
		return &exit.Error{Code: exit.Failure, Err: errors.New(rep.Text())}
	}
	return nil
}

// mergeJSON is a merge as `merge --json` prints it.
func mergeJSON(r worktree.MergeReport) any {
	notifyErr := ""
	if r.NotifyErr != nil {
		notifyErr = r.NotifyErr.Error()
	}
	return struct {
		Name      string   `json:"name"`
		Branch    string   `json:"branch"`
		Into      string   `json:"into"`
		Diffstat  string   `json:"diffstat,omitempty"`
		UpToDate  bool     `json:"upToDate,omitempty"`
		Conflicts []string `json:"conflicts,omitempty"`
		NotifyErr string   `json:"notifyError,omitempty"`
		Remote    string   `json:"remote,omitempty"`
	}{r.Name, r.Branch, r.Into, r.Stat, r.UpToDate, r.Conflicts, notifyErr, r.Remote}
}
