package statefile

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// The test binary doubles as a helper process: with envPath set, TestMain
// increments the counter there envCount times under Lock instead of
// running the tests, so tests can lock from other PIDs.
const (
	envPath  = "STATEFILE_TEST_PATH"
	envCount = "STATEFILE_TEST_COUNT"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(envPath); path != "" {
		count, _ := strconv.Atoi(os.Getenv(envCount))
		for range count {
			if err := increment(path); err != nil {
				fmt.Fprintln(os.Stderr, "child:", err)
				os.Exit(1)
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// increment is a read-modify-write of a counter file under Lock; lost
// updates show up as a final count below the number of increments.
func increment(path string) error {
	unlock, err := Lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	runtime.Gosched() // widen the window a missing lock would leave open
	return os.WriteFile(path, []byte(strconv.Itoa(n+1)), 0o644)
}

// startCounter starts a helper process that increments path count times.
func startCounter(t *testing.T, path string, count int) *exec.Cmd {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), envPath+"="+path, envCount+"="+strconv.Itoa(count))
	c.Stderr = os.Stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if c.ProcessState == nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	})
	return c
}
