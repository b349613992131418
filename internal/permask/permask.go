// Package permask is the permission asks that wait for the person:
//   - Open lists the asks in the person's and the lead's inboxes that
//     have no answer and whose deadline has not passed, each waiting or
//     abandoned (its asking process, or the worker it ran on, is gone);
//   - Answer finds a waiting ask and appends the person's answer to the
//     asker's inbox, where the team's waiting call finds it.
package permask

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// Ask is one permission_request as the commands see it.
type Ask struct {
	permgate.Payload
	// To is who is asked: user (the person) or lead.
	To      string    `json:"to"`
	AskedAt time.Time `json:"asked_at"`
	// State is Waiting, or Abandoned when the process that asked is
	// gone and nobody waits for the answer.
	State string `json:"state"`
}

// The states of an ask.
const (
	Waiting   = "waiting"
	Abandoned = "abandoned"
)

// Open are the asks to the person and to the lead that have no answer
// in the asker's inbox and whose deadline has not passed, oldest first:
// waiting while the process that made them runs the team, abandoned once
// it is gone (see team.WatchAsksOn): its owner lock is free (a file lock
// the kernel dropped, a lease on the NATS server that expired) or held by
// a run that started after the ask.
func Open(st *launch.Stores, now time.Time) ([]Ask, error) {
	ctx, cancel := context.WithTimeout(context.Background(), launch.NATSOpenTimeout)
	defer cancel()
	watch, err := registry.WatchAsksOn(ctx, st.Owner)
	if err != nil {
		return nil, err
	}
	asks, err := unanswered(ctx, st.Mail, now)
	if err != nil {
		return nil, err
	}
	workers, err := workersOf(ctx, st, asks)
	if err != nil {
		return nil, err
	}
	for i := range asks {
		asks[i].State = Abandoned
		waits := watch.Waits(asks[i].AskedAt)
		if w := asks[i].Worker; w != "" {
			// A teammate on a worker asked: its call waits while that worker lives.
			info, alive := workers[w]
			waits = alive && (info.Since.IsZero() || !asks[i].AskedAt.Before(info.Since.Truncate(time.Millisecond)))
		}
		if waits {
			asks[i].State = Waiting
		}
	}
	return asks, nil
}

// workersOf are the live workers of the team, by id, when an ask was made
// on one (a team across hosts, on a NATS server); nil otherwise.
func workersOf(ctx context.Context, st *launch.Stores, asks []Ask) (map[string]hosts.WorkerInfo, error) {
	if !st.NATS || !slices.ContainsFunc(asks, func(a Ask) bool { return a.Worker != "" }) {
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
	out := make(map[string]hosts.WorkerInfo, len(alive))
	for id, raw := range alive {
		var info hosts.WorkerInfo
		_ = json.Unmarshal(raw, &info) // alive, whatever it says of itself
		out[id] = info
	}
	return out, nil
}

// unanswered are the asks with no answer in the asker's inbox whose
// deadline has not passed.
func unanswered(ctx context.Context, store launch.MailStore, now time.Time) ([]Ask, error) {
	var out []Ask
	for _, to := range []string{inbox.UserName, inbox.LeadName} {
		msgs, _, err := store.ReadAll(ctx, to)
		if err != nil {
			return nil, err
		}
		for _, m := range msgs {
			if m.Type != permgate.TypeRequest {
				continue
			}
			var p permgate.Payload
			if json.Unmarshal(m.Payload, &p) != nil || p.RequestID == "" || p.RequestID != m.CorrelationID {
				continue // not an ask the team made
			}
			if inbox.ValidateName(m.From) != nil || !now.Before(p.Deadline) {
				continue
			}
			p.Agent = m.From
			answered, err := hasResponse(ctx, store, m.From, p.RequestID)
			if err != nil {
				return nil, err
			}
			if !answered {
				out = append(out, Ask{Payload: p, To: to, AskedAt: m.Timestamp})
			}
		}
	}
	return out, nil
}

func hasResponse(ctx context.Context, store launch.MailStore, name, id string) (bool, error) {
	msgs, _, err := store.ReadAll(ctx, name)
	if err != nil {
		return false, err
	}
	for _, m := range msgs {
		if m.Type == permgate.TypeResponse && m.CorrelationID == id {
			return true, nil
		}
	}
	return false, nil
}

// find is the waiting ask id that the person may answer.
func find(st *launch.Stores, id string, now time.Time) (Ask, error) {
	asks, err := Open(st, now)
	if err != nil {
		return Ask{}, err
	}
	for _, a := range asks {
		if a.RequestID != id {
			continue
		}
		if a.State == Abandoned {
			return Ask{}, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the agentteam process that made the ask %s is gone (killed or crashed): nobody waits for its answer", id)}
		}
		if a.To != inbox.UserName {
			return Ask{}, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("the ask %s is for the lead to answer (--permission-delegate lead), not for you", id)}
		}
		return a, nil
	}
	return Ask{}, &exit.Error{Code: exit.Failure, Err: fmt.Errorf("no permission ask %q is waiting (agentteam requests lists those that are): it may have been answered or timed out", id)}
}

// Answer finds the waiting ask id and answers it as the person:
// agentteam approve and deny, and a watching chat. always also adds the
// ask's rule to the project file; applies says whether later runs take it
// before the project is trusted.
func Answer(ctx context.Context, g *launch.GlobalOptions, ws *workspace.Workspace, st *launch.Stores, id string, approve, always bool, reason string, now time.Time) (a Ask, applies bool, err error) {
	if a, err = find(st, id, now); err != nil {
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
	return a, applies, answer(ctx, st.Mail, a, approve, always, reason)
}

// answer appends the person's answer to the asker's inbox, where the
// team's waiting call finds it.
func answer(ctx context.Context, store launch.MailStore, a Ask, approve, always bool, reason string) error {
	p := permgate.Payload{RequestID: a.RequestID, Approve: &approve, Always: always, Reason: reason, By: inbox.UserName}
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
	_, err = store.Append(ctx, a.Agent, inbox.Message{Type: permgate.TypeResponse, From: inbox.UserName, To: a.Agent,
		CorrelationID: a.RequestID, Content: content, Payload: raw})
	return err
}
