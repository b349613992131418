package inbox

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// maxLineBytes bounds one line: content escaped at worst 6 bytes per byte,
// plus room for the other fields. Append refuses longer lines; the reader
// reports them as bad without holding them in memory.
const maxLineBytes = 6*MaxContentBytes + 512<<10

// badLineShown is how much of a bad line BadLine keeps.
const badLineShown = 512

// Batch is a run of lines read from an inbox: the messages after the read
// position up to the last complete line, and the lines that did not parse.
// A trailing partial line (a writer mid-write) is left for a later read.
type Batch struct {
	Messages []Message
	Bad      []BadLine

	// Pos is where committing the batch leaves the read position, in the
	// terms of the store that read it (byte offsets here, stream sequences
	// in a JetStream store). Only that store's Commit reads it; nil (a
	// batch made by hand) commits nothing.
	Pos Position
}

// Position is a store's own record of where a batch ends; readers pass it
// back to Commit untouched.
type Position any

// filePos is the file store's Position: offsets in the inbox's log.
type filePos struct {
	base  int64 // the read position when the batch was read
	start int64 // where reading began: base, or 0 when the log was replaced
	next  int64 // just after the last complete line read
	// file is the log read: a commit moves the position of that file
	// only, never of one that replaced it since.
	file statefile.FileID
}

// Empty reports whether the batch has neither messages nor bad lines.
func (b Batch) Empty() bool { return len(b.Messages) == 0 && len(b.Bad) == 0 }

// ReadUnread returns the lines after name's read position. It changes
// nothing, but for one repair: a read position that cannot be trusted is
// set aside and the whole inbox returned (StoreOptions.OnRepair). Commit
// marks the batch read. A missing inbox is an empty batch. Once ctx is
// done it reads nothing.
func (s *Store) ReadUnread(ctx context.Context, name string) (Batch, error) {
	if err := checkName(name); err != nil {
		return Batch{}, err
	}
	if err := ctx.Err(); err != nil {
		return Batch{}, fmt.Errorf("read inbox %s: %w", name, err)
	}
	var b Batch
	f, fi, err := s.openStat(name)
	if f == nil || err != nil {
		b.Pos = filePos{}
		return b, err
	}
	defer f.Close()
	pos, err := s.position(name, f)
	if err != nil {
		return Batch{}, err
	}
	p := filePos{base: pos, start: pos, next: pos, file: statefile.IDOf(fi)}
	if fi.Size() < pos {
		// The log is shorter than the position: it was replaced, so all of it is new.
		p.start = 0
	}
	end, err := scan(f, p.start, func(off int64, m *Message, bad *BadLine) {
		if m != nil {
			b.Messages = append(b.Messages, *m)
		} else {
			b.Bad = append(b.Bad, *bad)
		}
	})
	if err != nil {
		return Batch{}, fmt.Errorf("read inbox %s: %w", name, err)
	}
	p.next = end
	b.Pos = p
	return b, nil
}

// ReadAll returns every message and bad line of name's inbox, read or not.
func (s *Store) ReadAll(_ context.Context, name string) ([]Message, []BadLine, error) {
	if err := checkName(name); err != nil {
		return nil, nil, err
	}
	f, _, err := s.open(name)
	if f == nil || err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var msgs []Message
	var bads []BadLine
	_, err = scan(f, 0, func(off int64, m *Message, bad *BadLine) {
		if m != nil {
			msgs = append(msgs, *m)
		} else {
			bads = append(bads, *bad)
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read inbox %s: %w", name, err)
	}
	return msgs, bads, nil
}

// Stats counts an inbox's lines.
type Stats struct {
	Total  int // valid messages
	Unread int // valid messages after the read position
	Bad    int // lines that did not parse
	// Broken, when not empty, is one sentence naming the file that is
	// wrong: the inbox is a symbolic link or a directory (it cannot be read;
	// the counts are 0), or its read position cannot be trusted (the next
	// read sets it aside and delivers every message again, so Unread counts
	// them all).
	Broken string
}

// Stats counts name's messages; a missing inbox is all zeros. It changes
// nothing: what is broken is reported in Stats.Broken, not repaired.
func (s *Store) Stats(_ context.Context, name string) (Stats, error) {
	var st Stats
	if err := checkName(name); err != nil {
		return st, err
	}
	f, size, err := s.open(name)
	if refusal := statefile.Refusal(err); refusal != nil {
		return Stats{Broken: refusal.Error()}, nil
	}
	if f == nil || err != nil {
		return st, err
	}
	defer f.Close()
	pos, _, err := s.positions.read(name, fileAttr(f), false)
	if errors.Is(err, ErrCorruptCursor) {
		pos, err = s.positions.confirmCorrupt(name, err)
	}
	if errors.Is(err, ErrCorruptCursor) {
		st.Broken = err.Error() + "; the next read sets it aside and delivers the inbox's messages again"
		pos, err = 0, nil
	}
	if err != nil {
		return st, err
	}
	if size < pos {
		pos = 0 // replaced log, as in ReadUnread
	}
	_, err = scan(f, 0, func(off int64, m *Message, bad *BadLine) {
		switch {
		case m == nil:
			st.Bad++
		case off >= pos:
			st.Total++
			st.Unread++
		default:
			st.Total++
		}
	})
	if err != nil {
		return Stats{}, fmt.Errorf("read inbox %s: %w", name, err)
	}
	return st, nil
}

// HasUnread cheaply reports whether name's inbox has bytes past its read
// position (a partial line counts). With a read position that cannot be
// trusted, any message counts: the next read sets it aside and delivers them.
func (s *Store) HasUnread(_ context.Context, name string) (bool, error) {
	if err := checkName(name); err != nil {
		return false, err
	}
	path := s.Path(name)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("inbox %s: %w", name, err)
	}
	if err := statefile.CheckRegular(path, fi); err != nil {
		return false, fmt.Errorf("inbox %s: %w", name, err)
	}
	pos, _, err := s.positions.read(name, pathAttr(path), false)
	if errors.Is(err, ErrCorruptCursor) {
		return fi.Size() > 0, nil
	}
	if err != nil {
		return false, err
	}
	return fi.Size() > pos || (fi.Size() < pos && fi.Size() > 0), nil
}

// open opens name's inbox for reading; a missing file is (nil, 0, nil).
func (s *Store) open(name string) (*os.File, int64, error) {
	f, fi, err := s.openStat(name)
	if f == nil || err != nil {
		return nil, 0, err
	}
	return f, fi.Size(), nil
}

// openStat opens name's inbox for reading with what it learnt of the file;
// a missing file is (nil, nil, nil).
func (s *Store) openStat(name string) (*os.File, fs.FileInfo, error) {
	f, fi, err := statefile.OpenStat(s.Path(name), os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open inbox %s: %w", name, err)
	}
	return f, fi, nil
}

// scanReaders are scan's buffers: a fresh 64 KiB for each read of an
// inbox, mostly a few lines, was a quarter of what a team allocated. What
// scan hands on is decoded or copied, never the buffer.
var scanReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

// scan reads complete lines of f from offset start and hands each one to fn,
// parsed (m) or rejected (bad). It returns the offset just after the last
// complete line; a trailing line without '\n' is not read.
func scan(f io.ReadSeeker, start int64, fn func(off int64, m *Message, bad *BadLine)) (int64, error) {
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return start, err
	}
	r := scanReaders.Get().(*bufio.Reader)
	r.Reset(f)
	defer func() { r.Reset(nil); scanReaders.Put(r) }()
	off := start
	var long []byte   // a line longer than the reader's buffer, gathered
	var longLen int64 // its full length, which may exceed what long holds
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case err == nil:
		case errors.Is(err, bufio.ErrBufferFull):
			if len(long)+len(chunk) <= maxLineBytes {
				long = append(long, chunk...)
			} else if len(long) < badLineShown {
				long = append(long, chunk[:badLineShown-len(long)]...)
			}
			longLen += int64(len(chunk))
			continue
		case errors.Is(err, io.EOF):
			return off, nil // what is left is a partial line, for later
		default:
			return off, err
		}
		line, n := chunk, int64(len(chunk))
		if longLen > 0 {
			n += longLen
			if n <= maxLineBytes {
				line = append(long, chunk...)
			} else {
				line = long
			}
		}
		lineOff := off
		off += n
		long, longLen = long[:0], 0
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if n > maxLineBytes {
			fn(lineOff, nil, badLine(lineOff, line, fmt.Sprintf("line is %d bytes, over the %d limit", n, maxLineBytes)))
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // a blank line carries nothing to report
		}
		var m Message
		if err := json.Unmarshal(line, &m); err != nil {
			fn(lineOff, nil, badLine(lineOff, line, "not JSON: "+err.Error()))
			continue
		}
		if m.ID == "" || m.Type == "" {
			fn(lineOff, nil, badLine(lineOff, line, "missing id or type"))
			continue
		}
		fn(lineOff, &m, nil)
	}
}

func badLine(off int64, line []byte, reason string) *BadLine {
	if len(line) > badLineShown {
		line = line[:badLineShown]
		// Do not end on half a character (at most UTFMax-1 bytes to drop).
		for i := 0; i < utf8.UTFMax-1 && len(line) > 0; i++ {
			if r, size := utf8.DecodeLastRune(line); r != utf8.RuneError || size != 1 {
				break
			}
			line = line[:len(line)-1]
		}
	}
	return &BadLine{Offset: off, Line: string(line), Reason: reason}
}
