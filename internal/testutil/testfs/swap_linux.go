package testfs

import (
	"sync"

	"golang.org/x/sys/unix"
)

// Swap exchanges the paths a and b (a directory and a link to elsewhere)
// in one step each time (RENAME_EXCHANGE), over and over as a hostile
// command in a loop would, until stop is called. stop says how many
// exchanges were made and the error that ended them early, if one did.
func Swap(a, b string) (stop func() (swaps int64, err error)) {
	done := make(chan struct{})
	var (
		wg sync.WaitGroup
		n  int64
		e  error
	)
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
				e = err
				return
			}
			n++
		}
	})
	return func() (int64, error) {
		close(done)
		wg.Wait()
		return n, e
	}
}
