// Package inbox is the message log of each agent: an append-only JSONL file
// plus a durable read position. Of agents it knows only who may have an
// inbox (ValidateName); of models, nothing.
package inbox

import (
	"encoding/json"
	"time"
)

// MessageType says what a message is. The basic types are these;
// the team's protocols name theirs where they are run.
type MessageType string

// Message types.
const (
	TypeMessage   MessageType = "message"
	TypeBroadcast MessageType = "broadcast"
	TypeResult    MessageType = "result"
	TypeError     MessageType = "error"
)

// MaxContentBytes caps one message's content; larger ones are refused.
const MaxContentBytes = 256 << 10

// Message is one line of an inbox file.
type Message struct {
	ID            string          `json:"id"`
	Type          MessageType     `json:"type"`
	From          string          `json:"from"`
	To            string          `json:"to"`
	Content       string          `json:"content"`
	Timestamp     time.Time       `json:"timestamp"`
	CorrelationID string          `json:"correlation_id,omitempty"`
	TaskID        string          `json:"task_id,omitempty"`
	Payload       json.RawMessage `json:"payload,omitempty"`
}

// BadLine is a line of an inbox file that could not be parsed. It stays in
// the file; the reader skips it and reports it.
type BadLine struct {
	Offset int64  // byte offset of the line in the file
	Line   string // the raw line, truncated to 512 bytes
	Reason string
}
