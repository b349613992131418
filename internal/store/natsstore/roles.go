package natsstore

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
)

// Role is what a user of a team may do on the server. A lead may do all;
// a worker and a person may send only as those they speak for, and never
// queue a spawn or take the team's owner lease: the sender of a message
// is in its subject (SentSubject), so it is what the server authenticated.
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

// RolePermissions are what a user of team in role may publish and
// subscribe to; team AnyTeam gives them in every team. A lead's are
// TeamPermissions (nil with AnyTeam: the global account's owner). A
// worker's and a person's read all their team's lead reads; they publish
// inbox messages only under the senders they speak for, no spawn request
// and no owner lease, session or sender claim of the lead or the person,
// and change no stream's settings (a subject transform would rename a
// sender) nor delete any message.
func RolePermissions(team string, role Role) *server.Permissions {
	if role == RoleLead || role == "" {
		if team == AnyTeam {
			return nil
		}
		return TeamPermissions(team)
	}
	// A stream's or bucket's name as one token: any with AnyTeam.
	bucket := func(name string) string {
		if team == AnyTeam {
			return "*"
		}
		return name
	}
	p := "agentteam." + team + "."
	var pub, deny []string
	switch role {
	case RoleWorker:
		pub = []string{p + "inbox.*.*", p + "sender.*", p + "session.>", p + "events"}
		for _, who := range []string{"user", "lead"} {
			deny = append(deny, p+"inbox.*."+who, p+"sender."+who, p+"session."+who, p+"session."+who+".>")
		}
	case RolePerson:
		pub = []string{p + "inbox.*.user", p + "events"}
	}
	deny = append(deny, p+"spawn", "$KV."+bucket(LeaseBucketName(team))+"."+ownerKey)
	pub = append(pub, "$JS.API.INFO", userInfoSubject)
	sub := []string{p + ">", "_INBOX.>"}
	for _, b := range []string{BucketName(team), EntriesBucket(team, "registry"), LeaseBucketName(team)} {
		pub = append(pub, "$KV."+bucket(b)+".>")
		sub = append(sub, "$KV."+bucket(b)+".>")
	}
	streams := []string{StreamName(team), EventStreamName(team), SessionStreamName(team), QueueStreamName(team),
		"KV_" + BucketName(team), "KV_" + EntriesBucket(team, "registry"), "KV_" + LeaseBucketName(team)}
	if team == AnyTeam {
		streams = []string{"*"}
	}
	for _, s := range streams {
		pub = append(pub,
			// A stream may be made where there is none, as agentteam
			// makes it (openStream); never updated, purged or deleted.
			"$JS.API.STREAM.INFO."+s,
			"$JS.API.STREAM.CREATE."+s,
			"$JS.API.STREAM.MSG.GET."+s,
		)
		pub = append(pub, readingSubjects(s)...)
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub, Deny: deny},
		Subscribe: &server.SubjectPermission{Allow: sub},
	}
}
