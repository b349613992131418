package inbox

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/gofrs/flock"
)

// pathMutexes maps an absolute path to its *sync.Mutex. It is process-wide on
// purpose: it mirrors the kernel's lock table, which is process-wide too, so
// two Stores (or plain Lock callers) on the same file exclude each other.
// Entries are never removed; there is one per distinct locked path.
var pathMutexes sync.Map

// Lock excludes other goroutines of this process and other processes from
// path until unlock is called. In-process exclusion comes first (a mutex per
// path), then an advisory flock on path+".lock": a *flock.Flock is not a mutex
// between goroutines, and the mutex keeps them from queueing in the kernel.
// unlock is safe to call more than once.
func Lock(path string) (unlock func(), err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	v, _ := pathMutexes.LoadOrStore(abs, new(sync.Mutex))
	mu := v.(*sync.Mutex)
	mu.Lock()
	fl := flock.New(abs+".lock", flock.SetFlag(lockFileFlag()), flock.SetPermissions(0o644))
	if err := fl.Lock(); err != nil {
		mu.Unlock()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			// Unlock also closes the descriptor; closing alone would release the flock too.
			_ = fl.Unlock()
			mu.Unlock()
		})
	}, nil
}
