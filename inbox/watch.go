package inbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agentteam/agentteam/internal/store/statefile"
)

// subscriber is one Watch call. seen is the inbox size when it was last
// signalled: a log only grows, so an unchanged size means nothing new, and
// the in-process wake, fsnotify and the poll do not signal the same lines
// three times.
type subscriber struct {
	ch   chan struct{}
	seen int64 // guarded by Store.mu
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
	s.subscribe(name, sub)
	if has, err := s.HasUnread(name); err != nil || has {
		// On error, wake the caller so that its own read reports the problem.
		s.mu.Lock()
		signal(sub)
		s.mu.Unlock()
	}
	go func() {
		t := time.NewTicker(s.poll)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				s.unsubscribe(name, sub)
				close(ch)
				return
			case <-t.C:
				s.notify(name)
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
	s.mu.Lock()
	s.closed = true
	dw := s.watcher
	s.watcher = nil
	s.mu.Unlock()
	if dw != nil {
		return dw.stop()
	}
	return nil
}

func (s *Store) subscribe(name string, sub *subscriber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.subs[name]
	if m == nil {
		m = make(map[*subscriber]struct{})
		s.subs[name] = m
	}
	sub.seen = s.size(name)
	m[sub] = struct{}{}
	s.nsubs++
	if s.watcher == nil && !s.closed {
		// Without fsnotify (no inotify instances left, say) the poll still works.
		s.watcher = s.startDirWatcher()
	}
}

func (s *Store) unsubscribe(name string, sub *subscriber) {
	s.mu.Lock()
	delete(s.subs[name], sub)
	if len(s.subs[name]) == 0 {
		delete(s.subs, name)
	}
	s.nsubs--
	var dw *dirWatcher
	if s.nsubs == 0 {
		// No one is watching: give the inotify instance back.
		dw, s.watcher = s.watcher, nil
	}
	s.mu.Unlock()
	if dw != nil {
		_ = dw.stop()
	}
}

// wake is Append's in-process signal; it costs a map lookup when no one watches name.
func (s *Store) wake(name string) {
	s.notify(name)
}

// notify signals every watcher of name whose last seen size differs from now.
// The size is taken under the lock so that notifiers see sizes in order and a
// late, stale size cannot cause a spurious signal.
func (s *Store) notify(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.subs[name]) == 0 {
		return
	}
	size := s.size(name)
	for sub := range s.subs[name] {
		if sub.seen != size {
			sub.seen = size
			signal(sub)
		}
	}
}

// notifyAll signals every watcher, as when fsnotify lost events.
func (s *Store) notifyAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.subs {
		for sub := range m {
			signal(sub)
		}
	}
}

// signal leaves a value in sub's channel unless one is already waiting.
// The caller holds Store.mu, which keeps the channel from being closed meanwhile.
func signal(sub *subscriber) {
	select {
	case sub.ch <- struct{}{}:
	default:
	}
}

// size is the inbox file's size; missing or unreadable counts as 0, and a
// link is not followed.
func (s *Store) size(name string) int64 {
	fi, err := os.Lstat(s.Path(name))
	if err != nil {
		return 0
	}
	return fi.Size()
}

// startDirWatcher watches the inbox directory, creating it so there is
// something to watch; it returns nil if fsnotify is unavailable.
func (s *Store) startDirWatcher() *dirWatcher {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil
	}
	if err := w.Add(s.dir); err != nil {
		_ = w.Close()
		return nil
	}
	dw := &dirWatcher{w: w, done: make(chan struct{})}
	go func() {
		defer close(dw.done)
		for {
			select {
			case ev, ok := <-w.Events:
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
					s.notify(name)
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				s.notifyAll() // an overflow drops events; let every watcher look
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
