// Package poll is the chat screen's look at the team's stores, which
// other processes write too (agentteam send, a team across hosts):
//   - Poller reads the inboxes and the registry on its own goroutine,
//     never in Update: each inbox's mark (a file's stat, a stream's last
//     sequence) tells whether to reread it, and the registry's version
//     or file stat whether it changed;
//   - what changed goes to the program as a Snapshot (registry, unread
//     counts, the lead's tokens), a Feed (new messages, in time order) and
//     an MCP (the MCP servers' states).
package poll
