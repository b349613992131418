package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team"
	"github.com/agentteam/agentteam/workspace"
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
			return runRequests(opts)
		},
	}
	c.Flags().BoolVar(&opts.All, "all", false, "also list the abandoned asks: those whose asking agentteam process is gone")
	return c
}

// ask is one permission_request as the commands see it.
type ask struct {
	team.PermissionPayload
	// To is who is asked: user (the person) or lead.
	To      string    `json:"to"`
	AskedAt time.Time `json:"asked_at"`
	// State is askWaiting, or askAbandoned when the process that asked is
	// gone and nobody waits for the answer.
	State string `json:"state"`
}

// The states of an ask.
const (
	askWaiting   = "waiting"
	askAbandoned = "abandoned"
)

func runRequests(opts *RequestsOptions) error {
	ws, err := launch.OpenWorkspace(opts.GlobalOptions)
	if err != nil {
		return err
	}
	st, err := launch.OpenStoresAs(context.Background(), opts.GlobalOptions, ws, natsstore.RolePerson)
	if err != nil {
		return err
	}
	defer st.Close()
	all, err := openAsks(st, opts.Now())
	if err != nil {
		return err
	}
	var asks []ask
	for _, a := range all {
		if opts.All || a.State == askWaiting {
			asks = append(asks, a)
		}
	}
	if opts.JSON {
		if asks == nil {
			asks = []ask{}
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
		if a.State == askAbandoned {
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

// openAsks are the asks to the person and to the lead that have no answer
// in the asker's inbox and whose deadline has not passed, oldest first:
// waiting while the process that made them runs the team, abandoned once
// it is gone (see team.WatchAsksOn): its owner lock is free (a file lock
// the kernel dropped, a lease on the NATS server that expired) or held by
// a run that started after the ask.
func openAsks(st *launch.Stores, now time.Time) ([]ask, error) {
	ctx, cancel := context.WithTimeout(context.Background(), launch.NATSOpenTimeout)
	defer cancel()
	watch, err := team.WatchAsksOn(ctx, st.Owner)
	if err != nil {
		return nil, err
	}
	asks, err := unansweredAsks(st.Mail, now)
	if err != nil {
		return nil, err
	}
	workers, err := workersOf(ctx, st, asks)
	if err != nil {
		return nil, err
	}
	for i := range asks {
		asks[i].State = askAbandoned
		waits := watch.Waits(asks[i].AskedAt)
		if w := asks[i].Worker; w != "" {
			// A teammate on a worker asked: its call waits while that worker lives.
			info, alive := workers[w]
			waits = alive && (info.Since.IsZero() || !asks[i].AskedAt.Before(info.Since.Truncate(time.Millisecond)))
		}
		if waits {
			asks[i].State = askWaiting
		}
	}
	return asks, nil
}

// workersOf are the live workers of the team, by id, when an ask was made
// on one (a team across hosts, on a NATS server); nil otherwise.
func workersOf(ctx context.Context, st *launch.Stores, asks []ask) (map[string]team.WorkerInfo, error) {
	if !st.NATS || !slices.ContainsFunc(asks, func(a ask) bool { return a.Worker != "" }) {
		return nil, nil
	}
	beats, err := natsstore.OpenWorkers(ctx, st.Conn, st.Spec.Team, st.Copies...)
	if err != nil {
		return nil, err
	}
	alive, err := beats.Alive(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]team.WorkerInfo, len(alive))
	for id, raw := range alive {
		var info team.WorkerInfo
		_ = json.Unmarshal(raw, &info) // alive, whatever it says of itself
		out[id] = info
	}
	return out, nil
}

// unansweredAsks are the asks with no answer in the asker's inbox whose
// deadline has not passed.
func unansweredAsks(store launch.MailStore, now time.Time) ([]ask, error) {
	var out []ask
	for _, to := range []string{workspace.UserName, workspace.LeadName} {
		msgs, _, err := store.ReadAll(to)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if m.Type != team.TypePermissionRequest {
				continue
			}
			var p team.PermissionPayload
			if json.Unmarshal(m.Payload, &p) != nil || p.RequestID == "" || p.RequestID != m.CorrelationID {
				continue // not an ask the team made
			}
			if workspace.ValidateName(m.From) != nil || !now.Before(p.Deadline) {
				continue
			}
			p.Agent = m.From
			answered, err := hasPermissionResponse(store, m.From, p.RequestID)
			if err != nil {
				return nil, err
			}
			if !answered {
				out = append(out, ask{PermissionPayload: p, To: to, AskedAt: m.Timestamp})
			}
		}
	}
	return out, nil
}

func hasPermissionResponse(store launch.MailStore, name, id string) (bool, error) {
	msgs, _, err := store.ReadAll(name)
	if err != nil {
		return false, err
	}
	for _, m := range msgs {
		if m.Type == team.TypePermissionResponse && m.CorrelationID == id {
			return true, nil
		}
	}
	return false, nil
}

// findAsk is the waiting ask id that the person may answer.
func findAsk(st *launch.Stores, id string, now time.Time) (ask, error) {
	asks, err := openAsks(st, now)
	if err != nil {
		return ask{}, err
	}
	for _, a := range asks {
		if a.RequestID != id {
			continue
		}
		if a.State == askAbandoned {
			return ask{}, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the agentteam process that made the ask %s is gone (killed or crashed): nobody waits for its answer", id)}
		}
		if a.To != workspace.UserName {
			return ask{}, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the ask %s is for the lead to answer (--permission-delegate lead), not for you", id)}
		}
		return a, nil
	}
	return ask{}, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("no permission ask %q is waiting (agentteam requests lists those that are): it may have been answered or timed out", id)}
}

// answerAsk appends the person's answer to the asker's inbox, where the
// team's waiting call finds it.
// answerAskAs finds the waiting ask id and answers it as the person:
// agentteam approve and deny, and a watching chat. always also adds the
// ask's rule to the project file; applies says whether later runs take it
// before the project is trusted.
func answerAskAs(g *launch.GlobalOptions, ws *workspace.Workspace, st *launch.Stores, id string, approve, always bool, reason string, now time.Time) (a ask, applies bool, err error) {
	if a, err = findAsk(st, id, now); err != nil {
		return a, false, err
	}
	applies = true
	if always {
		r, err := permission.ParseRule(a.Rule)
		if err != nil {
			return a, false, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the ask %s carries no rule to add: %w", a.RequestID, err)}
		}
		if applies, err = config.AddAllowRule(g.Getenv, ws.Root, r); err != nil {
			return a, false, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("add the rule: %w", err)}
		}
	}
	return a, applies, answerAsk(st.Mail, a, approve, always, reason)
}

func answerAsk(store launch.MailStore, a ask, approve, always bool, reason string) error {
	p := team.PermissionPayload{RequestID: a.RequestID, Approve: &approve, Always: always, Reason: reason, By: workspace.UserName}
	if always {
		p.Rule = a.Rule
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return err
	}
	content := "The person allowed your tool call."
	if !approve {
		content = "The person denied your tool call. Reason: " + reason
	}
	_, err = store.Append(a.Agent, inbox.Message{Type: team.TypePermissionResponse, From: workspace.UserName, To: a.Agent,
		CorrelationID: a.RequestID, Content: content, Payload: raw})
	return err
}
