// Package natsserver runs the team's NATS server: `agentteam serve`'s
// embedded NATS server with JetStream and who may use it.
//
//   - Start runs it from ServerOptions (listen and cluster addresses,
//     routes, data directory locked against a second serve, TLS files)
//     and says in one sentence why it could not start; StartLocal is the
//     credential-less server of tests.
//   - Users: a users file (ReadUsersFile) puts each team's users in an
//     account of their own, each with its role's permissions
//     (RolePermissions): the team's own subjects, streams and buckets as
//     natsstore names them, a worker or person sending only as those it
//     speaks for.
//   - MakeCreds makes the nkey seed serve keeps for its own user in the
//     state directory, where natsconn's clients find it.
package natsserver
