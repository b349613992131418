package inbox

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentteam/agentteam/internal/statefile"
)

// ErrCorruptCursor is wrapped by the error for a read position that cannot
// be trusted: a record that does not parse (also under the lock, so not one
// torn by a write under way), a directory, a symbolic link. Readers set such
// a file aside and start again from the beginning of the inbox (see
// StoreOptions.OnRepair); Stats reports it in Stats.Broken.
var ErrCorruptCursor = errors.New("read position is corrupt")

// cursorError says why a read position cannot be trusted.
type cursorError struct {
	path string
	what string // "is corrupt: it holds …", "is a directory", …
	err  error  // the refusal behind it, if any
}

func (e *cursorError) Error() string { return "read position " + e.path + " " + e.what }

func (e *cursorError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrCorruptCursor}
	}
	return []error{ErrCorruptCursor, e.err}
}

// cursorShown is how much of a bad record the error quotes.
const cursorShown = 64

func corruptRecord(path string, data []byte) error {
	if len(data) > cursorShown {
		data = data[:cursorShown]
	}
	return &cursorError{path: path, what: fmt.Sprintf("is corrupt: it holds %q", data)}
}

// untrusted turns the refusal of a read position file that is a link or
// not a regular file into a cursorError; other errors pass unchanged.
func untrusted(path string, err error) error {
	var nr *statefile.NotRegularError
	switch {
	case errors.Is(err, statefile.ErrSymlink):
		return &cursorError{path: path, what: "is a symbolic link", err: err}
	case errors.As(err, &nr) && nr.Mode.IsDir():
		return &cursorError{path: path, what: "is a directory", err: err}
	case errors.As(err, &nr):
		return &cursorError{path: path, what: "is not a regular file", err: err}
	}
	return err
}

// position is name's read position for a reader. One that cannot be
// trusted is set aside under the inbox's lock and reading starts from 0:
// the messages are delivered again (readers drop ids they have seen)
// rather than never. OnRepair is told, after the lock is released.
func (s *Store) position(name string) (int64, error) {
	pos, err := s.readCursor(name, false)
	if !errors.Is(err, ErrCorruptCursor) {
		return pos, err
	}
	// Under the lock no commit is under way: what is still bad is corrupt.
	h, lerr := statefile.Hold(s.Path(name))
	if lerr != nil {
		return 0, fmt.Errorf("read position of %s: %w", name, lerr)
	}
	pos, repaired, err := s.repairCursor(name)
	h.Unlock()
	s.reportRepair(name, repaired)
	return pos, err
}

// repairCursor reads name's read position; the caller holds the inbox's
// lock. One that cannot be trusted is renamed to NAME.cursor.corrupt-TIME
// (a link is moved, never followed), which makes the position 0; repaired
// then says so in a sentence wrapping ErrCorruptCursor.
func (s *Store) repairCursor(name string) (pos int64, repaired, err error) {
	pos, err = s.readCursor(name, true)
	if !errors.Is(err, ErrCorruptCursor) {
		return pos, nil, err
	}
	path := s.cursorPath(name)
	aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if rerr := os.Rename(path, aside); rerr != nil {
		return 0, nil, fmt.Errorf("inbox %s: %w, and setting it aside failed: %w", name, err, rerr)
	}
	return 0, fmt.Errorf("inbox %s: %w; set aside as %s, and the inbox's messages are delivered again from the start",
		name, err, aside), nil
}

// reportRepair tells OnRepair of a repair, if there was one.
func (s *Store) reportRepair(name string, repaired error) {
	if repaired != nil && s.onRepair != nil {
		s.onRepair(name, repaired)
	}
}
