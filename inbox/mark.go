package inbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"
)

// Mark is what tells that an inbox changed without reading it, in any
// store: equal Marks of one inbox mean nothing changed. Each store sets
// what it has: the files their log's size and modification time and the
// read position (which a commit moves without touching either: it is the
// log's extended attribute); a stream the sequence of the inbox's last
// message and the read position.
type Mark struct {
	Size     int64
	Mod      time.Time
	Seq      uint64 // a stream's: its last message's sequence
	Position int64  // -1: the position cannot be trusted (Stats says why)
}

// Mark returns name's Mark; a missing inbox is the zero Mark. Equal Marks
// mean equal Stats (short of a change within the file system's time
// resolution that kept the size).
func (s *Store) Mark(_ context.Context, name string) (Mark, error) {
	if err := checkName(name); err != nil {
		return Mark{}, err
	}
	path := s.Path(name)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Mark{}, nil
	}
	if err != nil {
		return Mark{}, fmt.Errorf("inbox %s: %w", name, err)
	}
	m := Mark{Size: fi.Size(), Mod: fi.ModTime()}
	pos, _, err := s.positions.read(name, pathAttr(path), false)
	switch {
	case errors.Is(err, ErrCorruptCursor):
		m.Position = -1
	case err != nil:
		return Mark{}, err
	default:
		m.Position = pos
	}
	return m, nil
}
