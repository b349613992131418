// Package failover holds the cluster failover proof, a test only:
// an embedded 3-node JetStream cluster, the lead's `agentteam run` and
// three `agentteam worker` processes, one worker killed with SIGKILL and
// one node stopped mid-run. It is a package of its own so that `go test`
// runs it beside the long cmd package.
package failover
