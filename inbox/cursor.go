package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// posAttr is the extended attribute of an inbox log that holds its read
// position: a byte offset just after the last line committed as read, as
// "OFFSET MILLIS CHECK". It lives on the log it is a position in, so it
// costs no file (making files is what a teammate cost most on ext4), is
// set in one call that readers see whole, and a log replaced by another
// file brings no stale position with it. Where the file system keeps no
// extended attributes (or off Linux), and in workspaces written before,
// the position is the file NAME.cursor (cursorFile); the attribute, when
// there, is read first, and the first commit carries a NAME.cursor over.
const posAttr = "user.agentteam.read"

// maxPosAttr bounds what is read of the attribute; a longer one is corrupt.
const maxPosAttr = 64

// posSource is where a read position was found.
type posSource int

const (
	fromNothing posSource = iota // neither: position 0
	fromAttr                     // the log's extended attribute
	fromFile                     // NAME.cursor
)

// encodePos is the attribute's value for a read position.
func encodePos(offset int64, at time.Time) []byte {
	at = at.UTC().Truncate(time.Millisecond)
	return fmt.Appendf(nil, "%d %d %s", offset, at.UnixMilli(), cursorCheck(offset, at))
}

// parsePos reads the attribute's value; ok is false for one that is corrupt.
func parsePos(data []byte) (offset int64, ok bool) {
	f := strings.Fields(string(data))
	if len(f) != 3 {
		return 0, false
	}
	off, err1 := strconv.ParseInt(f[0], 10, 64)
	ms, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || off < 0 || f[2] != cursorCheck(off, time.UnixMilli(ms)) {
		return 0, false
	}
	return off, true
}

// positions are the read positions of a Store's inboxes: where each is
// kept (the log's attribute posAttr, or NAME.cursor), read, written and,
// when it cannot be trusted, set aside.
type positions struct {
	dir  string
	path func(name string) string // an inbox's log
	// fileCursors keeps read positions in NAME.cursor files, as where the
	// file system has no extended attributes (tests of that layout).
	fileCursors bool
}

// cursorPath is the file NAME.cursor of name.
func (p *positions) cursorPath(name string) string {
	return filepath.Join(p.dir, name+cursorExt)
}

// attrReader reads the position attribute of one log: through its held
// lock, an open file or its path.
type attrReader func(name string, buf []byte) (int, error)

// read returns name's read position from get (the log's
// attribute), or else from NAME.cursor, and where it was found. locked
// says the caller holds the inbox's lock. A position that cannot be
// trusted is an error wrapping ErrCorruptCursor, with src saying which.
func (p *positions) read(name string, get attrReader, locked bool) (offset int64, src posSource, err error) {
	if !p.fileCursors {
		var buf [maxPosAttr]byte
		n, err := get(posAttr, buf[:])
		switch {
		case err == nil:
			if off, ok := parsePos(buf[:n]); ok {
				return off, fromAttr, nil
			}
			return 0, fromAttr, corruptAttr(p.path(name), buf[:n])
		case errors.Is(err, statefile.ErrAttrTooLong):
			return 0, fromAttr, &cursorError{path: attrPlace(p.path(name)),
				what: fmt.Sprintf("is corrupt: it is longer than %d bytes", maxPosAttr)}
		case errors.Is(err, statefile.ErrNoAttr), errors.Is(err, errors.ErrUnsupported), errors.Is(err, fs.ErrNotExist):
		default:
			return 0, fromAttr, fmt.Errorf("read position of %s: %w", name, err)
		}
	}
	off, found, err := p.readCursor(name, locked)
	if !found {
		return off, fromNothing, err
	}
	return off, fromFile, err
}

// cursorFile is the durable read position of one inbox: a byte offset just
// after the last line that was committed as read. It is rewritten in place
// as a record of fixed length (cursorRecordLen), so a commit makes no new
// file; Check lets a reader tell a record from one torn by a write under
// way. A file without Check (written by an earlier version) is still read.
type cursorFile struct {
	Offset    int64     `json:"offset"`
	UpdatedAt time.Time `json:"updatedAt"`
	Check     string    `json:"check,omitempty"`
}

// cursorRecordLen is the length of every cursor record: the JSON object,
// spaces, then '\n'.
const cursorRecordLen = 128

// cursorReadTries bounds how often a reader without the lock reads again a
// record torn by a concurrent in-place write.
const cursorReadTries = 5

func cursorCheck(offset int64, at time.Time) string {
	return fmt.Sprintf("%08x", crc32.ChecksumIEEE(fmt.Appendf(nil, "%d/%d", offset, at.UnixMilli())))
}

// encodeCursor is the fixed-length record of a read position.
func encodeCursor(offset int64, at time.Time) ([]byte, error) {
	at = at.UTC().Truncate(time.Millisecond)
	data, err := json.Marshal(cursorFile{Offset: offset, UpdatedAt: at, Check: cursorCheck(offset, at)})
	if err != nil {
		return nil, err
	}
	if len(data) >= cursorRecordLen {
		return nil, fmt.Errorf("read position record is %d bytes, over %d", len(data), cursorRecordLen-1)
	}
	return append(append(data, strings.Repeat(" ", cursorRecordLen-1-len(data))...), '\n'), nil
}

// parseCursor reads a record; ok is false for one that is torn or corrupt.
// An empty file is position 0: it is a cursor being written for the first time.
func parseCursor(data []byte) (offset int64, ok bool) {
	if len(data) == 0 {
		return 0, true
	}
	var c cursorFile
	if json.Unmarshal(data, &c) != nil || c.Offset < 0 {
		return 0, false
	}
	if c.Check != "" && c.Check != cursorCheck(c.Offset, c.UpdatedAt) {
		return 0, false
	}
	return c.Offset, true
}

// readCursor returns the read position of name kept in the file
// NAME.cursor (an earlier version's layout, and where the file system keeps
// no extended attributes); found says the file is there. locked says the
// caller holds the inbox's lock, so no write is under way and a bad record
// is corrupt, not torn. A read position that cannot be trusted is an error
// wrapping ErrCorruptCursor.
func (p *positions) readCursor(name string, locked bool) (offset int64, found bool, err error) {
	path := p.cursorPath(name)
	for try := 1; ; try++ {
		data, err := statefile.ReadFile(path, maxCursorBytes)
		if errors.Is(err, fs.ErrNotExist) {
			return 0, false, nil
		}
		if err != nil {
			return 0, true, fmt.Errorf("read position of %s: %w", name, untrusted(path, err))
		}
		if off, ok := parseCursor(data); ok {
			return off, true, nil
		}
		if locked || try == cursorReadTries {
			return 0, true, corruptRecord(path, data)
		}
	}
}

// maxCursorBytes bounds what is read of a read position file; a longer one
// is corrupt anyway.
const maxCursorBytes = 4 << 10

// Commit marks b as read: the read position moves to the end of b.
// It never moves backwards, so committing an older batch is a no-op. A batch
// read from a log that was replaced (shorter than the position) moves it only
// if no one committed since that batch was read. A read position that cannot
// be trusted is set aside first, as a reader does (StoreOptions.OnRepair).
func (s *Store) Commit(_ context.Context, name string, b Batch) error {
	if err := checkName(name); err != nil {
		return err
	}
	p, ok := b.Pos.(filePos)
	if !ok || p.next == p.base {
		return nil // nothing read, or no batch of this store
	}
	repaired, err := s.commit(name, p)
	s.reportRepair(name, repaired) // after the lock is released
	return err
}

func (s *Store) commit(name string, b filePos) (repaired, err error) {
	// The log's own lock guards its read position too: no lock file to
	// make, and making files is what costs most here.
	h, err := statefile.HoldLog(s.Path(name), false)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // the log is gone: no position in it to move
	}
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", name, err)
	}
	defer h.Unlock()
	if !h.SameFile(b.file) {
		// The log was replaced since the batch was read: its offsets are no
		// positions in the new one, whose lines are all unread.
		return nil, nil
	}
	cur, src, repaired, err := s.positions.repair(name, h)
	if err != nil {
		return repaired, fmt.Errorf("commit %s: %w", name, err)
	}
	replaced := b.start < b.base
	if (replaced && cur != b.base) || (!replaced && b.next <= cur) {
		return repaired, nil
	}
	if err := s.positions.write(name, h, src, b.next); err != nil {
		return repaired, fmt.Errorf("commit %s: %w", name, err)
	}
	return repaired, nil
}

// write writes name's read position, the caller holding the lock:
// into the log's extended attribute, then, if the position was still in
// NAME.cursor (src), that file is removed (carried over: the attribute,
// once there, is read first, so a crash in between loses nothing). Where
// the file system keeps no extended attributes, NAME.cursor is rewritten
// in place instead.
func (p *positions) write(name string, h statefile.Held, src posSource, offset int64) error {
	now := time.Now()
	if !p.fileCursors {
		err := h.SetAttr(posAttr, encodePos(offset, now))
		if err == nil {
			if src == fromFile {
				if rerr := os.Remove(p.cursorPath(name)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
					return fmt.Errorf("carrying the read position over from %s: %w", p.cursorPath(name), rerr)
				}
			}
			return nil
		}
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
	}
	rec, err := encodeCursor(offset, now)
	if err != nil {
		return err
	}
	return h.WriteRecord(p.cursorPath(name), rec)
}
