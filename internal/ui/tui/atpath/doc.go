// Package atpath is what the chat's @paths read of the workspace:
//   - List and Cache: one directory's names offered for @path completion,
//     none of .git or .agentteam, none a .gitignore excludes, no link that
//     leads out, at most MaxDirEntries; Cache keeps each listing and hands
//     Update a tea.Cmd that reads it, so no directory is read in Update;
//   - Attach: the files a message's @paths name framed after it, read
//     beneath the workspace's root (workspace.Place: no link out, no FIFO
//     opened blocking), bounded per file and in all; Split takes the
//     frames off a message read back from its session.
//
// It does file IO only in List and Attach, which the screen runs off its
// Update goroutine.
package atpath
