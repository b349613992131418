package event

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// followChunk bounds what one look at an event file reads; the rest is
// read at the next look.
const followChunk = 4 << 20

// EventFollower hands out the events another process writes to a team's
// event log, each once, in order: what a watching chat shows. Lines it
// cannot read are counted and passed over.
type EventFollower struct {
	read func(ctx context.Context) ([][]byte, error)
	// Bad counts the lines passed over.
	Bad int
}

// Next returns the events written since the last call.
func (f *EventFollower) Next(ctx context.Context) ([]Event, error) {
	lines, err := f.read(ctx)
	var out []Event
	for _, l := range lines {
		var e Event
		if json.Unmarshal(l, &e) != nil {
			f.Bad++
			continue
		}
		out = append(out, e)
	}
	return out, err
}

// FollowEventLines follows a store's event log through read, which
// returns the lines stored since its last call.
func FollowEventLines(read func(ctx context.Context) ([][]byte, error)) *EventFollower {
	return &EventFollower{read: read}
}

// FollowEventFile follows the event file at path (events.jsonl), starting
// with at most the last backlog bytes of what it holds now (from the
// first whole line in them). A file not made yet is followed once it is;
// one cut shorter (a fresh log) is read again from its start.
func FollowEventFile(path string, backlog int64) *EventFollower {
	ff := &fileFollow{path: path, backlog: backlog, start: true}
	return &EventFollower{read: func(context.Context) ([][]byte, error) { return ff.read() }}
}

type fileFollow struct {
	path    string
	backlog int64
	start   bool  // the first look: skip to the backlog
	off     int64 // where the next look reads from
	partial []byte
}

func (ff *fileFollow) read() ([][]byte, error) {
	// Not a FIFO or a device: O_NONBLOCK, then the type is checked.
	f, err := os.OpenFile(ff.path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the event log: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read the event log: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("read the event log: %s is not a regular file", ff.path)
	}
	size := info.Size()
	skipLine := false
	switch {
	case ff.start:
		ff.start = false
		if size > ff.backlog {
			ff.off, skipLine = size-ff.backlog, true
		}
	case size < ff.off:
		ff.off, ff.partial = 0, nil
	}
	if size == ff.off {
		return nil, nil
	}
	buf := make([]byte, min(size-ff.off, followChunk))
	n, err := f.ReadAt(buf, ff.off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read the event log: %w", err)
	}
	ff.off += int64(n)
	data := buf[:n]
	if skipLine {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil, nil
		}
		data = data[i+1:]
	}
	if len(ff.partial) > 0 {
		data = append(ff.partial, data...)
		ff.partial = nil
	}
	var lines [][]byte
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		if i > 0 {
			lines = append(lines, data[:i])
		}
		data = data[i+1:]
	}
	if len(data) > followChunk { // a line without end past any bound: passed over
		data = nil
	}
	ff.partial = append([]byte(nil), data...)
	return lines, nil
}
