package natsconn

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
)

// accessTimeout bounds CheckAccess's question: a server that does not
// answer it (another NATS server, events off) is not refused for that.
const accessTimeout = 2 * time.Second

// CheckAccess asks the server whose credentials nc connected with and
// refuses, in one sentence, those of another team's account: its
// requests for team's streams would only be refused one by one, each
// after its own wait. A server that does not say lets the caller go on.
func CheckAccess(ctx context.Context, nc *nats.Conn, team string) error {
	ctx, cancel := context.WithTimeout(ctx, accessTimeout)
	defer cancel()
	m, err := nc.RequestWithContext(ctx, UserInfoSubject, nil)
	if err != nil {
		return nil
	}
	var r struct {
		Data *struct {
			User    string `json:"user"`
			Account string `json:"account"`
		} `json:"data"`
	}
	if json.Unmarshal(m.Data, &r) != nil || r.Data == nil {
		return nil
	}
	other, ok := strings.CutPrefix(r.Data.Account, AccountName(""))
	if !ok || other == team || other == "" {
		return nil
	}
	return fmt.Errorf("the credentials of user %s are team %s's: they do not reach team %s (use team %s's credentials, or --store …/%s)",
		r.Data.User, other, team, team, other)
}

// AccountName is the NATS account holding team's streams when the server
// asks for credentials: an account per team, so no team's user can reach
// another team's streams or subjects whatever it asks for.
func AccountName(team string) string { return "agentteam_" + team }

// UserInfoSubject answers a client with its own account and permissions.
const UserInfoSubject = "$SYS.REQ.USER.INFO"
