// Package natsconn is how a client reaches the team's NATS server.
//
//   - Credentials: from the environment (AGENTTEAM_NATS_*), from a
//     credentials file (an nkey seed or USER PASSWORD, refused when others
//     may read it), or found in this host's state directory where
//     `agentteam serve` made them, per role (lead, worker, person).
//   - Connect dials with those credentials and TLS files and turns each
//     failure into one sentence (no server, credentials refused, TLS).
//   - A publish the server refuses gets no answer, only an asynchronous
//     error on the connection: Connect's connections hand it to the
//     publish watching that subject (WatchRefusal), which ends at once.
//   - CheckAccess asks the server whose credentials these are and refuses
//     another team's account in one sentence.
package natsconn
