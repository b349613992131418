package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// SendOptions are the inputs of `agentteam send`.
type SendOptions struct {
	*launch.GlobalOptions
	IO      IOStreams
	To      string
	From    string
	Content string
	// EachLine sends every non-empty line of Content as its own message.
	EachLine bool
}

// newSendCmd builds `agentteam send`; runF, when not nil, replaces runSend.
func newSendCmd(g *launch.GlobalOptions, streams IOStreams, runF func(*SendOptions) error) *cobra.Command {
	opts := &SendOptions{GlobalOptions: g, IO: streams}
	c := &cobra.Command{
		Use:   "send --to NAME CONTENT | -",
		Short: "Append a message to an agent's inbox (wakes it if it is idle)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exit.Usagef("send needs the message: agentteam send --to NAME \"text\" (or - to read it from stdin)")
			}
			opts.Content = strings.Join(args, " ")
			if opts.Content == "-" {
				data, err := io.ReadAll(opts.IO.In)
				if err != nil {
					return fmt.Errorf("read the message from stdin: %w", err)
				}
				opts.Content = string(data)
			}
			if runF != nil {
				return runF(opts)
			}
			return runSend(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.To, "to", "", "the agent to send to: lead or a teammate's name")
	c.Flags().StringVar(&opts.From, "from", inbox.UserName, "the sender's name: user or your own, never an agent's")
	c.Flags().BoolVar(&opts.EachLine, "each-line", false, "send every non-empty line as its own message (e.g. with - to pipe a list)")
	_ = c.MarkFlagRequired("to")
	return c
}

func runSend(ctx context.Context, opts *SendOptions) error {
	contents := []string{opts.Content}
	if opts.EachLine {
		contents = contents[:0]
		for _, line := range strings.Split(opts.Content, "\n") {
			if strings.TrimSpace(line) != "" {
				contents = append(contents, strings.TrimRight(line, "\r"))
			}
		}
		if len(contents) == 0 {
			return exit.Usagef("there are no lines to send")
		}
	}
	for _, c := range contents {
		if strings.TrimSpace(c) == "" {
			return exit.Usagef("the message is empty")
		}
		if n := len(c); n > inbox.MaxContentBytes {
			return &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the message is %d bytes, over the limit of %d (256 KiB): put large content in a file in the workspace and send its path", n, inbox.MaxContentBytes)}
		}
	}
	if err := inbox.ValidateName(opts.From); err != nil {
		return exit.Usagef("--from: %v", err)
	}
	if err := inbox.ValidateName(opts.To); err != nil {
		return exit.Usagef("--to: %v", err)
	}
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
	if err := checkSender(ctx, reg, opts.From); err != nil {
		return err
	}
	if err := team.CheckRecipient(ctx, reg, opts.To); err != nil {
		return &exit.Error{Code: exit.Failure, Err: err} // before Init: a refused send leaves no .agentteam/ behind
	}
	if !st.NATS {
		if err := ws.Init(); err != nil {
			return err
		}
	}
	if err := warnEnded(ctx, opts.IO.Err, reg, opts.To); err != nil {
		return err
	}
	store := st.Mail
	// The message is what counts; a log that cannot be written is said, once.
	events := st.Events(ws, func(e event.Event) {
		if f, ok := e.Payload.(event.Failure); ok {
			fmt.Fprintf(opts.IO.Err, "warning: %s\n", f.Text)
		}
	})
	enc := json.NewEncoder(opts.IO.Out)
	for _, c := range contents {
		m, err := store.Append(ctx, opts.To, inbox.Message{Type: inbox.TypeMessage, From: opts.From, To: opts.To, Content: c})
		if err != nil {
			return err
		}
		events.Emit(event.Event{Payload: event.Delivered(m)})
		if opts.JSON {
			err = enc.Encode(m)
		} else {
			_, err = fmt.Fprintln(opts.IO.Out, m.ID)
		}
		if err != nil {
			return err
		}
	}
	if !opts.Quiet && !opts.JSON {
		fmt.Fprintf(opts.IO.Err, "sent %d message(s) to %s\n", len(contents), opts.To)
	}
	return nil
}

// warnEnded says when the recipient is a teammate that has ended: the
// message is still appended (a teammate spawned again under that name reads
// it), but nobody reads it now, and "sent" alone would say otherwise.
func warnEnded(ctx context.Context, w io.Writer, reg *registry.Registry, to string) error {
	c, err := reg.Read(ctx)
	if err != nil {
		return err
	}
	if note := team.EndedNote(c, to); note != "" {
		fmt.Fprintf(w, "warning: %s\n", note)
	}
	return nil
}

// checkSender refuses a --from that names an agent, the lead or any teammate
// in the registry (in any case): a person must not pose as one of the team.
func checkSender(ctx context.Context, reg *registry.Registry, from string) error {
	const who = "a person sends as user (the default) or under their own name"
	if strings.EqualFold(from, inbox.LeadName) {
		return exit.Usagef("--from %s: that is an agent's name (the lead's); %s", from, who)
	}
	c, err := reg.Read(ctx)
	if err != nil {
		return err
	}
	for _, m := range c.Teammates {
		if strings.EqualFold(m.Name, from) {
			return exit.Usagef("--from %s: that is an agent's name (teammate %s); %s", from, m.Name, who)
		}
	}
	return nil
}
