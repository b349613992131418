// Package engine is what a chat asks of the team, apart from any screen:
// the Engine interface (a running team's, or a watch's that only sends
// and answers through the stores), the slash commands whose work is one
// Engine call, and the texts both chats show (sessions, models, a call in
// a line). The TUI (internal/ui/tui) and lines mode (internal/ui/linechat) both
// run on it, so lines mode links no Bubble Tea.
package engine
