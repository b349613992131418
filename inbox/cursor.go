package inbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// cursorFile is the durable read position of one inbox: a byte offset just
// after the last line that was committed as read.
type cursorFile struct {
	Offset    int64     `json:"offset"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// readCursor returns the read position of name; no cursor file means 0.
func (s *Store) readCursor(name string) (int64, error) {
	data, err := os.ReadFile(s.cursorPath(name))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read position of %s: %w", name, err)
	}
	var c cursorFile
	if err := json.Unmarshal(data, &c); err != nil {
		return 0, fmt.Errorf("read position of %s: %s is corrupt: %w", name, s.cursorPath(name), err)
	}
	if c.Offset < 0 {
		return 0, fmt.Errorf("read position of %s: negative offset %d", name, c.Offset)
	}
	return c.Offset, nil
}

// Commit marks b as read: the read position moves to the end of b.
// It never moves backwards, so committing an older batch is a no-op. A batch
// read from a log that was replaced (shorter than the position) moves it only
// if no one committed since that batch was read.
func (s *Store) Commit(name string, b Batch) error {
	if err := checkName(name); err != nil {
		return err
	}
	if b.next == b.base {
		return nil
	}
	path := s.cursorPath(name)
	unlock, err := Lock(path)
	if err != nil {
		return fmt.Errorf("commit %s: %w", name, err)
	}
	defer unlock()
	cur, err := s.readCursor(name)
	if err != nil {
		return fmt.Errorf("commit %s: %w", name, err)
	}
	replaced := b.start < b.base
	if (replaced && cur != b.base) || (!replaced && b.next <= cur) {
		return nil
	}
	data, err := json.Marshal(cursorFile{Offset: b.next, UpdatedAt: time.Now().UTC().Truncate(time.Millisecond)})
	if err != nil {
		return fmt.Errorf("commit %s: %w", name, err)
	}
	if err := ReplaceFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("commit %s: %w", name, err)
	}
	return nil
}
