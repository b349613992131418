package inbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"strings"
	"time"

	"github.com/agentteam/agentteam/internal/statefile"
)

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

// readCursor returns the read position of name; no cursor file means 0.
// locked says the caller holds the inbox's lock, so no write is under way
// and a bad record is corrupt, not torn. A read position that cannot be
// trusted is an error wrapping ErrCorruptCursor.
func (s *Store) readCursor(name string, locked bool) (int64, error) {
	path := s.cursorPath(name)
	for try := 1; ; try++ {
		data, err := statefile.ReadFile(path, maxCursorBytes)
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		if err != nil {
			return 0, fmt.Errorf("read position of %s: %w", name, untrusted(path, err))
		}
		if off, ok := parseCursor(data); ok {
			return off, nil
		}
		if locked || try == cursorReadTries {
			return 0, corruptRecord(path, data)
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
func (s *Store) Commit(name string, b Batch) error {
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
	h, err := statefile.Hold(s.Path(name))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", name, err)
	}
	defer h.Unlock()
	cur, repaired, err := s.repairCursor(name)
	if err != nil {
		return repaired, fmt.Errorf("commit %s: %w", name, err)
	}
	replaced := b.start < b.base
	if (replaced && cur != b.base) || (!replaced && b.next <= cur) {
		return repaired, nil
	}
	rec, err := encodeCursor(b.next, time.Now())
	if err != nil {
		return repaired, fmt.Errorf("commit %s: %w", name, err)
	}
	if err := h.WriteRecord(s.cursorPath(name), rec); err != nil {
		return repaired, fmt.Errorf("commit %s: %w", name, err)
	}
	return repaired, nil
}
