package statefile

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
)

func TestLockExcludesGoroutines(t *testing.T) {
	const goroutines, per = 8, 200
	path := t.TempDir() + "/counter"
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range per {
				if err := increment(path); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	assertCounter(t, path, goroutines*per)
}

// Without the flock each process would hold only its own mutex, and
// read-modify-write cycles of different processes would lose updates.
func TestLockExcludesProcesses(t *testing.T) {
	const procs, per = 4, 200
	path := t.TempDir() + "/counter"
	var children []*exec.Cmd
	for range procs {
		children = append(children, startCounter(t, path, per))
	}
	for _, c := range children {
		if err := c.Wait(); err != nil {
			t.Errorf("child: %v", err)
		}
	}
	assertCounter(t, path, procs*per)
}

func assertCounter(t *testing.T, path string, want int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := strconv.Atoi(string(data)); got != want {
		t.Errorf("counter = %d, want %d (lost updates)", got, want)
	}
}
