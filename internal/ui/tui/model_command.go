package tui

// modelMsg is the label of the lead's model after /model switched it.
type modelMsg string
