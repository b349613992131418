package loop

// SessionLog is where an agent's conversation is kept when not in its
// session file: an append-only sequence of lines, each one chat message as
// JSON (the lines the file holds, without their newlines). The file is the
// default (AgentConfig.SessionPath, FileSession); a teammate's may be kept
// in a stream on a NATS server (natsstore.SessionLog), so that it can
// resume on another host. One writer per agent.
type SessionLog interface {
	// AppendLines stores lines after those already there, in order, and
	// returns once they are stored.
	AppendLines(lines [][]byte) error
	// Lines returns every line stored, oldest first. A line torn or garbled
	// is returned as it is: the agent skips what does not parse.
	Lines() ([][]byte, error)
	// Close lets go of what the log holds open; a later AppendLines opens
	// it again.
	Close() error
}
