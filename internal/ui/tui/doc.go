// Package tui is agentteam's interactive terminal program: one root model,
// panes that render, and engine events that reach it through program.Send.
//   - Model is the Bubble Tea root: Update only changes state, every IO
//     runs in a job handed to do (or a tea.Cmd), View only renders; its
//     components keep their own state (asker, eventSink, commander,
//     popup, screen, planBoard, the panes).
//   - Run and Watch start the program with what feeds it: the team's
//     events through a bridge.Bridge, the stores through a poll.Poller,
//     and the jobs' results.
//   - Below it: draw (styles, cell-exact lines), atpath (@path listings
//     and attachments), panel (team panel, feed, progress), poll, bridge,
//     and picker (chat --resume's list).
package tui
