package cmd

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/team/board"
)

// TasksOptions are the inputs of `agentteam tasks`.
type TasksOptions struct {
	*launch.GlobalOptions
	IO IOStreams
}

// newTasksCmd builds `agentteam tasks`; runF, when not nil, replaces runTasks.
func newTasksCmd(g *launch.GlobalOptions, io IOStreams, runF func(*TasksOptions) error) *cobra.Command {
	opts := &TasksOptions{GlobalOptions: g, IO: io}
	return &cobra.Command{
		Use:   "tasks",
		Short: "Show the task board: each task's id, status, owner, what it is blocked by, and subject",
		Args:  noArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return runTasks(c.Context(), opts)
		},
	}
}

// runTasks prints the board; reading it changes nothing (a missing board is empty).
func runTasks(ctx context.Context, opts *TasksOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(ctx, opts.GlobalOptions, ws, natsconn.RolePerson)
	if err != nil {
		return err
	}
	defer st.Close()
	f, err := st.Board.Read(ctx)
	if err != nil {
		return err
	}
	if opts.JSON {
		enc := json.NewEncoder(opts.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(f)
	}
	if len(f.Tasks) == 0 {
		fmt.Fprintf(opts.IO.Err, "no tasks on the board in %s yet\n", ws.Root)
		return nil
	}
	if !opts.Quiet {
		done := 0
		for _, t := range f.Tasks {
			if t.Status == board.TaskCompleted {
				done++
			}
		}
		fmt.Fprintf(opts.IO.Err, "task board · version %d · %d tasks, %d completed\n", f.Version, len(f.Tasks), done)
	}
	return board.FormatTasks(opts.IO.Out, f.Tasks)
}
