package natsconn

import (
	"fmt"
)

// Role is what a user of a team may do on the server. A lead may do all;
// a worker and a person may send only as those they speak for, and never
// queue a spawn or take the team's owner lease: the sender of a message
// is in its subject (natsstore's SentSubject), so it is what the server
// authenticated.
type Role string

const (
	// RoleLead is the process that runs the team (run, chat): everything.
	RoleLead Role = "lead"
	// RoleWorker is `agentteam worker`: it sends as its teammates, never as
	// the person (user) or the lead.
	RoleWorker Role = "worker"
	// RolePerson is a person's commands (send, approve, deny, inbox,
	// team, tasks, requests…): it sends as user alone.
	RolePerson Role = "person"
)

// Roles are the roles in the order serve makes their credentials.
var Roles = []Role{RoleLead, RoleWorker, RolePerson}

// ParseRole reads a role's name; "" is the lead (a users file's line
// without one).
func ParseRole(s string) (Role, error) {
	switch r := Role(s); r {
	case "":
		return RoleLead, nil
	case RoleLead, RoleWorker, RolePerson:
		return r, nil
	}
	return "", fmt.Errorf("role %q is not lead, worker or person", s)
}

// AnyTeam, as a team, is every team: the users of a server without an
// account per team (serve's own credentials without --team).
const AnyTeam = "*"
