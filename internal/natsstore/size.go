package natsstore

import (
	"fmt"

	"github.com/agentteam/agentteam/inbox"
)

// MaxPayload is the largest message `agentteam serve` takes (NATS's
// max_payload, 1 MiB by default): the files store's largest inbox line
// (its 256 KiB of content escaped at worst, 2 MiB) and its headers fit, so
// both stores take the same messages.
const MaxPayload = 4 << 20

// headerRoom is what a message's headers (its Nats-Msg-Id, an expected
// last sequence) may take of the server's max_payload.
const headerRoom = 1024

// encode is inbox.Encode refusing, as inbox.ErrTooLarge with what to do, a
// line over what the server takes: NATS's client says only "maximum
// payload exceeded", and the same message goes in on another server.
func (mb *Mailbox) encode(name string, m inbox.Message) (inbox.Message, []byte, error) {
	m, line, err := inbox.Encode(name, m)
	if err != nil {
		return m, nil, err
	}
	if limit := int(mb.nc.MaxPayload()) - headerRoom; len(line) > limit {
		return inbox.Message{}, nil, fmt.Errorf("message to %s: it is %d bytes as JSON, over the %d the NATS server takes (its max_payload): put large content in a file in the workspace and send its path: %w",
			name, len(line), limit, inbox.ErrTooLarge)
	}
	return m, line, nil
}
