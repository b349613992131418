package inbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// watchers are a Store's Watch calls, by inbox, and the one fsnotify
// watcher of its directory they share while any runs.
type watchers struct {
	dir  string
	path func(name string) string // an inbox's log

	mu      sync.Mutex
	subs    map[string]map[*subscriber]struct{} // by inbox name
	nsubs   int
	watcher *dirWatcher
	closed  bool
}

func newWatchers(dir string, path func(string) string) *watchers {
	return &watchers{dir: dir, path: path, subs: make(map[string]map[*subscriber]struct{})}
}

// subscriber is one Watch call. seen is the inbox size when it was last
// signalled: a log only grows, so an unchanged size means nothing new, and
// the in-process wake, fsnotify and the poll do not signal the same lines
// three times.
type subscriber struct {
	ch   chan struct{}
	seen int64 // guarded by watchers.mu
}

// dirWatcher is the one fsnotify watcher a Store shares among its Watch calls.
type dirWatcher struct {
	w    *fsnotify.Watcher
	done chan struct{} // closed when the fan-out goroutine has ended
}

// Watch returns a channel that receives a value whenever name's inbox may
// have new lines: at once on an Append by this Store, through fsnotify for
// writes by other processes (or other Stores), and by polling the file size
// as a backstop. The channel holds one value and coalesces; it starts with
// one if the inbox already has unread lines, so checking after subscribing
// never misses a line. When ctx is done every goroutine ends and the channel
// is closed. An invalid name gives a closed channel.
func (s *Store) Watch(ctx context.Context, name string) <-chan struct{} {
	ch := make(chan struct{}, 1)
	if checkName(name) != nil {
		close(ch)
		return ch
	}
	sub := &subscriber{ch: ch}
	w := s.watch
	w.subscribe(name, sub)
	if has, err := s.HasUnread(ctx, name); err != nil || has {
		// On error, wake the caller so that its own read reports the problem.
		w.mu.Lock()
		signal(sub)
		w.mu.Unlock()
	}
	go func() {
		t := time.NewTicker(s.poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				w.unsubscribe(name, sub)
				close(ch)
				return
			case <-t.C:
				w.notify(name)
			}
		}
	}()
	return ch
}

// Close stops the shared fsnotify watcher; later Watch calls poll only.
// Channels of running Watch calls stay open until their ctx is done. It also
// closes the lock and append descriptors kept for this directory's files
// (later calls open them again).
func (s *Store) Close() error {
	defer statefile.CloseKept(s.dir)
	return s.watch.close()
}

// close stops the shared watcher; later subscribers poll only.
func (w *watchers) close() error {
	w.mu.Lock()
	w.closed = true
	dw := w.watcher
	w.watcher = nil
	w.mu.Unlock()
	if dw != nil {
		return dw.stop()
	}
	return nil
}

func (w *watchers) subscribe(name string, sub *subscriber) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m := w.subs[name]
	if m == nil {
		m = make(map[*subscriber]struct{})
		w.subs[name] = m
	}
	sub.seen = w.size(name)
	m[sub] = struct{}{}
	w.nsubs++
	if w.watcher == nil && !w.closed {
		// Without fsnotify (no inotify instances left, say) the poll still works.
		w.watcher = w.startDirWatcher()
	}
}

func (w *watchers) unsubscribe(name string, sub *subscriber) {
	w.mu.Lock()
	delete(w.subs[name], sub)
	if len(w.subs[name]) == 0 {
		delete(w.subs, name)
	}
	w.nsubs--
	var dw *dirWatcher
	if w.nsubs == 0 {
		// No one is watching: give the inotify instance back.
		dw, w.watcher = w.watcher, nil
	}
	w.mu.Unlock()
	if dw != nil {
		_ = dw.stop()
	}
}

// notify signals every watcher of name whose last seen size differs from now.
// The size is taken under the lock so that notifiers see sizes in order and a
// late, stale size cannot cause a spurious signal.
func (w *watchers) notify(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.subs[name]) == 0 {
		return
	}
	size := w.size(name)
	for sub := range w.subs[name] {
		if sub.seen != size {
			sub.seen = size
			signal(sub)
		}
	}
}

// notifyAll signals every watcher, as when fsnotify lost events.
func (w *watchers) notifyAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.subs {
		for sub := range m {
			signal(sub)
		}
	}
}

// signal leaves a value in sub's channel unless one is already waiting.
// The caller holds watchers.mu, which keeps the channel from being closed meanwhile.
func signal(sub *subscriber) {
	select {
	case sub.ch <- struct{}{}:
	default:
	}
}

// size is the inbox file's size; missing or unreadable counts as 0, and a
// link is not followed.
func (w *watchers) size(name string) int64 {
	fi, err := os.Lstat(w.path(name))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// startDirWatcher watches the inbox directory, creating it so there is
// something to watch; it returns nil if fsnotify is unavailable.
func (w *watchers) startDirWatcher() *dirWatcher {
	if err := os.MkdirAll(w.dir, 0o755); err != nil {
		return nil
	}
	fw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil
	}
	if err := fw.Add(w.dir); err != nil {
		_ = fw.Close()
		return nil
	}
	dw := &dirWatcher{w: fw, done: make(chan struct{})}
	go func() {
		defer close(dw.done)
		for {
			select {
			case ev, ok := <-fw.Events:
				if !ok {
					return
				}
				if ev.Op == fsnotify.Chmod {
					// A read position set on a log (its extended attribute)
					// or a chmod: no new line.
					continue
				}
				base := filepath.Base(ev.Name)
				if name, isLog := strings.CutSuffix(base, logExt); isLog && name != "" {
					w.notify(name)
				}
			case _, ok := <-fw.Errors:
				if !ok {
					return
				}
				w.notifyAll() // an overflow drops events; let every watcher look
			}
		}
	}()
	return dw
}

// stop closes the fsnotify watcher and waits for its fan-out goroutine.
func (dw *dirWatcher) stop() error {
	err := dw.w.Close()
	<-dw.done
	return err
}
