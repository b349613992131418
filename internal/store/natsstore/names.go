package natsstore

import (
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/inbox"
)

// Team X's streams and buckets are named "agentteam_X" and "agentteam_X"
// followed by one of these suffixes (StreamName, SessionStreamName, …).
// Team names may hold '_', so a team named "X_sessions" would have its
// inboxes in team X's session stream (and its users, with no account per
// team, the right to read it): a team name may not end with one of them.
// As no suffix ends with another, two teams' names then never meet. A
// store made before this rule under such a name is not opened any more:
// its streams stay on the server until deleted by hand.
var reservedSuffixes = []string{"_events", "_leases", "_registry", "_sessions", "_spawn", "_workers"}

// checkTeam refuses a team name that is no subject token, or that ends
// with a reserved suffix (it would name another team's stream).
func checkTeam(team string) error {
	if err := checkToken("team", team); err != nil {
		return err
	}
	if s := ReservedSuffix(team); s != "" {
		return fmt.Errorf("team name %q ends with %q, which names a stream of team %s: %w",
			team, s, strings.TrimSuffix(team, s), inbox.ErrInvalid)
	}
	return nil
}

// ReservedSuffix is the reserved suffix team ends with, "" for none.
func ReservedSuffix(team string) string {
	for _, s := range reservedSuffixes {
		if strings.HasSuffix(team, s) {
			return s
		}
	}
	return ""
}

// CheckTeamName refuses a team name that cannot prefix the team's streams,
// bucket and subjects: it must be one NATS token of letters, digits, '-'
// and '_', and not end with a suffix of another team's streams
// ("_sessions", "_leases", "_events", "_spawn", "_workers", "_registry").
func CheckTeamName(name string) error { return checkTeam(name) }

// CheckToken refuses a name that cannot be one token of a subject or part
// of a stream or consumer name (only letters, digits, '-' and '_'); what
// says what the name is ("user", "agent").
func CheckToken(what, name string) error { return checkToken(what, name) }
