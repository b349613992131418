// Package launch builds what a command runs a team with, from its flags
// and the config files:
//   - GlobalOptions and TeamFlags are the flags the commands share;
//     LoadConfig lays the config files under them and lists every
//     effective setting with where it came from;
//   - OpenStores opens the workspace's shared state as --store says: the
//     workspace's files, or a team on a NATS JetStream server (with this
//     host's serve credentials when the environment names none);
//   - NewModels builds the team's model clients, one per provider and
//     model, from the flags and the [providers] and [roles] tables;
//   - TeamFlags.Options, Permissions and OpenSandbox turn the flags into
//     team.Options: permissions, sandbox, hooks and AGENTS.md loader;
//     StartMCP starts the configured MCP servers;
//   - AskTrust asks the person whether to trust the project file.
package launch
