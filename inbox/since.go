package inbox

import (
	"context"
	"fmt"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// Since is how far ReadSince has read an inbox, in the terms of the store
// that read it (an offset in the log here, a stream sequence in a JetStream
// store); nil is the inbox's start. Readers pass it back untouched.
type Since any

// fileSince is the file store's Since: the offset just after the last
// complete line read, in the log file read.
type fileSince struct {
	next int64
	file statefile.FileID
}

// ReadSince returns the messages of name's inbox stored after since, read
// or not (bad lines are passed over), and where the next call goes on from:
// a reader that keeps it reads each message once, however long the inbox
// grows. A log replaced since it was read is read again from its start. A
// missing inbox is no message.
func (s *Store) ReadSince(_ context.Context, name string, since Since) ([]Message, Since, error) {
	if err := checkName(name); err != nil {
		return nil, since, err
	}
	f, fi, err := s.openStat(name)
	if err != nil {
		return nil, since, err
	}
	if f == nil {
		return nil, since, nil
	}
	defer f.Close()
	p, _ := since.(fileSince)
	id := statefile.IDOf(fi)
	if p.file != id || fi.Size() < p.next {
		p = fileSince{file: id} // another log than the one read: all of it is new
	}
	var msgs []Message
	end, err := scan(f, p.next, func(_ int64, m *Message, _ *BadLine) {
		if m != nil {
			msgs = append(msgs, *m)
		}
	})
	if err != nil {
		return nil, since, fmt.Errorf("read inbox %s: %w", name, err)
	}
	p.next = end
	return msgs, p, nil
}
