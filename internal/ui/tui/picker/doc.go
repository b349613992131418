// Package picker is the list `chat --resume` shows when the lead has more
// than one conversation to go back to: a Bubble Tea program of its own,
// run before the chat starts, that returns the session chosen.
package picker
