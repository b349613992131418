package loop

import "context"

// SessionLog is where an agent's conversation is kept when not in its
// session file: an append-only sequence of lines, each one chat message as
// JSON (the lines the file holds, without their newlines). The file is the
// default (AgentConfig.SessionPath, FileSession); a teammate's may be kept
// in a stream on a NATS server (natsstore.SessionLog), so that it can
// resume on another host. One writer per agent. A call made with its ctx
// done does nothing and returns ctx's error.
type SessionLog interface {
	// AppendLines stores lines after those already there, in order, and
	// returns once they are stored.
	AppendLines(ctx context.Context, lines [][]byte) error
	// Lines returns every line stored, oldest first. A line torn or garbled
	// is returned as it is: the agent skips what does not parse.
	Lines(ctx context.Context) ([][]byte, error)
	// Close lets go of what the log holds open; a later AppendLines opens
	// it again.
	Close() error
}

// LineReader is a SessionLog that hands its lines over one at a time, so
// a long conversation is never held whole while it is read back.
type LineReader interface {
	// EachLine calls fn with each line, oldest first; the slice is fn's
	// only during the call.
	EachLine(ctx context.Context, fn func([]byte)) error
}

// EachLine reads log's lines one at a time where it can, else all at once.
func EachLine(ctx context.Context, log SessionLog, fn func([]byte)) error {
	if lr, ok := log.(LineReader); ok {
		return lr.EachLine(ctx, fn)
	}
	lines, err := log.Lines(ctx)
	for _, l := range lines {
		fn(l)
	}
	return err
}
