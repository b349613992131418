package inbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentteam/agentteam/internal/store/statefile"
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

// corruptAttr is the error of a position attribute that does not parse.
func corruptAttr(logPath string, data []byte) error {
	if len(data) > cursorShown {
		data = data[:cursorShown]
	}
	return &cursorError{path: attrPlace(logPath), what: fmt.Sprintf("is corrupt: it holds %q", data)}
}

// attrPlace names the position attribute of the log logPath in a sentence.
func attrPlace(logPath string) string {
	return logPath + " (its extended attribute " + posAttr + ")"
}

// fileAttr reads an attribute of the open file f.
func fileAttr(f *os.File) attrReader {
	return func(name string, buf []byte) (int, error) { return statefile.FileAttr(f, name, buf) }
}

// pathAttr reads an attribute of the file path, a link not followed.
func pathAttr(path string) attrReader {
	return func(name string, buf []byte) (int, error) { return statefile.LinkAttr(path, name, buf) }
}

// position is name's read position for a reader of f, its log. One that
// cannot be trusted is set aside under the inbox's lock and reading starts
// from 0: the messages are delivered again (readers drop ids they have
// seen) rather than never. OnRepair is told, after the lock is released.
func (s *Store) position(name string, f *os.File) (int64, error) {
	pos, _, err := s.positions.read(name, fileAttr(f), false)
	if !errors.Is(err, ErrCorruptCursor) {
		return pos, err
	}
	// Under the lock no commit is under way: what is still bad is corrupt.
	h, lerr := statefile.HoldLog(s.Path(name), false)
	if errors.Is(lerr, fs.ErrNotExist) {
		return 0, nil // the log is gone since f was opened: read f whole
	}
	if lerr != nil {
		return 0, fmt.Errorf("read position of %s: %w", name, lerr)
	}
	pos, _, repaired, err := s.positions.repair(name, h)
	h.Unlock()
	s.reportRepair(name, repaired)
	return pos, err
}

// repair reads name's read position; the caller holds the inbox's lock,
// h. One that cannot be trusted is set aside, which makes the position 0:
// a NAME.cursor is renamed to NAME.cursor.corrupt-TIME (a link is moved,
// never followed); an attribute's value is kept in a new file of that name
// and the attribute set to 0. repaired then says so in a sentence wrapping
// ErrCorruptCursor.
func (p *positions) repair(name string, h statefile.Held) (pos int64, src posSource, repaired, err error) {
	pos, src, err = p.read(name, h.Attr, true)
	if !errors.Is(err, ErrCorruptCursor) {
		return pos, src, nil, err
	}
	path := p.cursorPath(name)
	aside := path + ".corrupt-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if src == fromAttr {
		var buf [maxPosAttr]byte
		n, _ := h.Attr(posAttr, buf[:])
		if werr := statefile.ReplaceFile(aside, buf[:n], 0o644); werr != nil {
			return 0, src, nil, fmt.Errorf("inbox %s: %w, and setting it aside failed: %w", name, err, werr)
		}
		if serr := h.SetAttr(posAttr, encodePos(0, time.Now())); serr != nil {
			return 0, src, nil, fmt.Errorf("inbox %s: %w, and resetting it failed: %w", name, err, serr)
		}
		// A NAME.cursor left by a carry-over cut short is older still.
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			return 0, src, nil, fmt.Errorf("inbox %s: %w, and removing %s failed: %w", name, err, path, rerr)
		}
	} else if rerr := os.Rename(path, aside); rerr != nil {
		return 0, src, nil, fmt.Errorf("inbox %s: %w, and setting it aside failed: %w", name, err, rerr)
	}
	return 0, src, fmt.Errorf("inbox %s: %w; set aside as %s, and the inbox's messages are delivered again from the start",
		name, err, aside), nil
}

// confirmCorrupt reads name's read position again under the inbox's lock,
// where no commit is under way: a record torn by one is not reported as
// corrupt. It changes nothing; if the lock cannot be had, err stands.
func (p *positions) confirmCorrupt(name string, err error) (int64, error) {
	h, lerr := statefile.HoldLog(p.path(name), false)
	if lerr != nil {
		return 0, err
	}
	defer h.Unlock()
	pos, _, err := p.read(name, h.Attr, true)
	return pos, err
}

// reportRepair tells OnRepair of a repair, if there was one.
func (s *Store) reportRepair(name string, repaired error) {
	if repaired != nil && s.onRepair != nil {
		s.onRepair(name, repaired)
	}
}
