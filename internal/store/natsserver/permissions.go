package natsserver

import (
	"github.com/nats-io/nats-server/v2/server"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// TeamPermissions are what team's users may publish and subscribe to: the
// team's own subjects and the JetStream API of its own streams and KV
// buckets, nothing of another team even within one account.
func TeamPermissions(team string) *server.Permissions {
	buckets := []string{natsstore.BucketName(team), natsstore.EntriesBucket(team, "registry"), natsstore.LeaseBucketName(team)}
	pub := []string{
		"agentteam." + team + ".>",
		"$JS.API.INFO",
		// Who the credentials are: a client told to open another team
		// says so at once instead of waiting for refused requests.
		natsconn.UserInfoSubject,
	}
	sub := []string{"agentteam." + team + ".>", "_INBOX.>"}
	for _, b := range buckets {
		pub = append(pub, "$KV."+b+".>")
		sub = append(sub, "$KV."+b+".>")
	}
	// The inboxes, the KV buckets (board, registry, leases and
	// heartbeats), the event log, the sessions, the work queue of spawn
	// requests.
	streams := []string{natsstore.StreamName(team), natsstore.EventStreamName(team), natsstore.SessionStreamName(team), natsstore.QueueStreamName(team)}
	for _, b := range buckets {
		streams = append(streams, "KV_"+b)
	}
	for _, s := range streams {
		pub = append(pub,
			"$JS.API.STREAM.*."+s,
			"$JS.API.STREAM.MSG.*."+s,
		)
		pub = append(pub, readingSubjects(s)...)
	}
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: pub},
		Subscribe: &server.SubjectPermission{Allow: sub},
	}
}

// readingSubjects are the JetStream API subjects every role publishes to
// read stream s: direct gets, its consumers, their acks and a watch's flow
// control.
func readingSubjects(s string) []string {
	return []string{
		"$JS.API.DIRECT.GET." + s,
		"$JS.API.DIRECT.GET." + s + ".>",
		"$JS.API.CONSUMER.*." + s,
		"$JS.API.CONSUMER.*." + s + ".>",
		"$JS.API.CONSUMER.DURABLE.CREATE." + s + ".*",
		"$JS.API.CONSUMER.MSG.NEXT." + s + ".*",
		"$JS.ACK." + s + ".>",
		"$JS.FC." + s + ".>",
	}
}

// RolePermissions are what a user of team in role may publish and
// subscribe to; team natsconn.AnyTeam gives them in every team. A lead's
// are TeamPermissions (nil with AnyTeam: the global account's owner). A
// worker's and a person's read all their team's lead reads; they publish
// inbox messages only under the senders they speak for, no spawn request
// and no owner lease, session or sender claim of the lead or the person,
// and change no stream's settings (a subject transform would rename a
// sender) nor delete any message.
func RolePermissions(team string, role natsconn.Role) *server.Permissions {
	if role == natsconn.RoleLead || role == "" {
		if team == natsconn.AnyTeam {
			return nil
		}
		return TeamPermissions(team)
	}
	// A stream's or bucket's name as one token: any with AnyTeam.
	bucket := func(name string) string {
		if team == natsconn.AnyTeam {
			return "*"
		}
		return name
	}
	p := "agentteam." + team + "."
	var pub, deny []string
	switch role {
	case natsconn.RoleWorker:
		pub = []string{p + "inbox.*.*", p + "sender.*", p + "session.>", p + "events"}
		for _, who := range []string{"user", "lead"} {
			deny = append(deny, p+"inbox.*."+who, p+"sender."+who, p+"session."+who, p+"session."+who+".>")
		}
	case natsconn.RolePerson:
		pub = []string{p + "inbox.*.user", p + "events"}
	}
	deny = append(deny, p+"spawn", "$KV."+bucket(natsstore.LeaseBucketName(team))+"."+natsstore.OwnerKey)
	pub = append(pub, "$JS.API.INFO", natsconn.UserInfoSubject)
	sub := []string{p + ">", "_INBOX.>"}
	for _, b := range []string{natsstore.BucketName(team), natsstore.EntriesBucket(team, "registry"), natsstore.LeaseBucketName(team)} {
		pub = append(pub, "$KV."+bucket(b)+".>")
		sub = append(sub, "$KV."+bucket(b)+".>")
	}
	streams := []string{natsstore.StreamName(team), natsstore.EventStreamName(team), natsstore.SessionStreamName(team), natsstore.QueueStreamName(team),
		"KV_" + natsstore.BucketName(team), "KV_" + natsstore.EntriesBucket(team, "registry"), "KV_" + natsstore.LeaseBucketName(team)}
	if team == natsconn.AnyTeam {
		streams = []string{"*"}
	}
	for _, s := range streams {
		pub = append(pub,
			// A stream may be made where there is none, as agentteam
			// makes it (natsstore's openStream); never updated, purged or deleted.
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
