package inbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// ErrTooLarge is returned (wrapped) for a message whose content exceeds MaxContentBytes.
var ErrTooLarge = errors.New("message content too large")

// ErrInvalid is returned (wrapped) for a message or inbox name that cannot be written.
var ErrInvalid = errors.New("invalid message")

// ErrHeld is a Commit that could not move the read position yet: another
// reader's unfinished commit holds the batch's last message (a store across
// hosts, when a node was lost mid-commit) until its time runs out. What was
// read stays unread and comes again; a reader that recorded it by id drops
// it then, and the next commit moves the position.
var ErrHeld = errors.New("the read position is held by an unfinished commit elsewhere")

const (
	logExt          = ".jsonl"
	cursorExt       = ".cursor"
	defaultPollTick = time.Second
)

// StoreOptions tunes a Store; the zero value means defaults.
type StoreOptions struct {
	// PollInterval is how often Watch compares file sizes as a backstop to
	// fsnotify; 0 means one second.
	PollInterval time.Duration

	// OnRepair, when set, is told each time a read position that cannot be
	// trusted (ErrCorruptCursor: a record that does not parse even under
	// the lock, a directory, a symbolic link) was set aside by ReadUnread or
	// Commit, so that the inbox is read again from its start instead of
	// never. name is the inbox; err is one sentence naming the bad file,
	// what was wrong and where it was kept (NAME.cursor.corrupt-TIME), and
	// wraps ErrCorruptCursor. It is called after the inbox's lock is
	// released, on the goroutine of the ReadUnread or Commit that repaired,
	// once per repair.
	OnRepair func(name string, err error)
}

// Store is the set of inboxes in one directory (.agentteam/inbox). It is safe
// for concurrent use; other processes may use the same directory at once.
// Its reads and writes take a context to keep one contract with a store
// across the network; a file does not block on one, so only Append and
// ReadUnread look at theirs, to do nothing once it is done.
type Store struct {
	dir      string
	poll     time.Duration
	onRepair func(name string, err error)

	positions positions // where each inbox's read position is kept
	watch     *watchers // the Watch calls, woken by Append
}

// NewStore returns the store of inboxes in dir; dir is created at first write.
func NewStore(dir string) *Store {
	return NewStoreWithOptions(dir, StoreOptions{})
}

// NewStoreWithOptions is NewStore with tuning.
func NewStoreWithOptions(dir string, opts StoreOptions) *Store {
	// Absolute once, so the lock does not resolve the working directory per call.
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	poll := opts.PollInterval
	if poll <= 0 {
		poll = defaultPollTick
	}
	s := &Store{dir: dir, poll: poll, onRepair: opts.OnRepair}
	s.positions = positions{dir: dir, path: s.Path}
	s.watch = newWatchers(dir, s.Path)
	return s
}

// Dir is the directory of the inbox files.
func (s *Store) Dir() string { return s.dir }

// Path is the inbox file of name.
func (s *Store) Path(name string) string { return filepath.Join(s.dir, name+logExt) }

// checkName refuses what is no agent name (ValidateName), so that no
// name leaves the directory and every store takes the same names.
func checkName(name string) error {
	if err := ValidateName(name); err != nil {
		return fmt.Errorf("inbox: %w", err)
	}
	return nil
}

// Append writes m as one line at the end of name's inbox, filling ID,
// Timestamp and To when empty, and wakes this Store's watchers of name at
// once (other Stores and processes see the write through fsnotify). Once
// ctx is done it writes nothing.
func (s *Store) Append(ctx context.Context, name string, m Message) (Message, error) {
	if err := checkName(name); err != nil {
		return Message{}, err
	}
	if err := ctx.Err(); err != nil {
		return Message{}, fmt.Errorf("message to %s: %w", name, err)
	}
	m, line, err := Encode(name, m)
	if err != nil {
		return Message{}, err
	}
	path := s.Path(name)
	err = appendLog(path, line)
	if errors.Is(err, fs.ErrNotExist) {
		// First write into this directory: create it, then try once more.
		if mkErr := os.MkdirAll(s.dir, 0o755); mkErr != nil {
			return Message{}, fmt.Errorf("message to %s: %w", name, mkErr)
		}
		err = appendLog(path, line)
	}
	if err != nil {
		return Message{}, fmt.Errorf("message to %s: %w", name, err)
	}
	s.watch.notify(name) // in-process: a map lookup when no one watches name
	return m, nil
}

// Encode checks m for name's inbox, fills ID, Timestamp and To when
// empty, and returns it with its inbox line (JSON and '\n'): the line every
// store keeps, so that all print the same shapes.
func Encode(name string, m Message) (Message, []byte, error) {
	if len(m.Content) > MaxContentBytes {
		return Message{}, nil, fmt.Errorf("message to %s: content is %d bytes, limit %d: %w",
			name, len(m.Content), MaxContentBytes, ErrTooLarge)
	}
	if m.Type == "" {
		return Message{}, nil, fmt.Errorf("message to %s: empty type: %w", name, ErrInvalid)
	}
	if err := ValidateName(m.From); err != nil { // an empty sender too
		return Message{}, nil, fmt.Errorf("message to %s: sender: %w", name, err)
	}
	if m.ID == "" {
		id, err := uuid.NewV7()
		if err != nil {
			return Message{}, nil, fmt.Errorf("message to %s: new id: %w", name, err)
		}
		m.ID = id.String()
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = time.Now().UTC().Truncate(time.Millisecond)
	}
	if m.To == "" {
		m.To = name
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // content is often code; keep <, >, & readable in the file
	if err := enc.Encode(m); err != nil {
		return Message{}, nil, fmt.Errorf("message to %s: %w", name, err)
	}
	if buf.Len() > maxLineBytes {
		return Message{}, nil, fmt.Errorf("message to %s: encoded line is %d bytes, limit %d: %w",
			name, buf.Len(), maxLineBytes, ErrTooLarge)
	}
	return m, buf.Bytes(), nil
}

// Names lists the agents that have an inbox file, sorted; a file whose
// name is no agent's is left out. An entry named
// NAME.jsonl that is no regular file (a symbolic link, a directory) is
// listed too, so that it is shown as broken (Stats.Broken), not left out.
func (s *Store) Names(_ context.Context) ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list inboxes: %w", err)
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if name, ok := strings.CutSuffix(n, logExt); ok && ValidateName(name) == nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// appendLog writes line, which ends with '\n', at the end of the inbox
// file path under its lock, through the descriptor kept open for it: the
// log's own, which the lock is a flock of.
func appendLog(path string, line []byte) error {
	h, err := statefile.HoldLog(path, true)
	if err != nil {
		return err
	}
	defer h.Unlock()
	return h.AppendLine(line)
}
