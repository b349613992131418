package board

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Environment of the child process that races to claim tasks (see TestMain).
const (
	envTaskClaimer     = "AGENTTEAM_TEST_TASK_CLAIMER" // the board file
	envTaskClaimerName = "AGENTTEAM_TEST_TASK_CLAIMER_NAME"
)

// claimFromEnv is the child's whole job: say "ready", wait for "go" on
// stdin, claim until no task is left, and print "won ID" for each claim it won.
func claimFromEnv() error {
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return fmt.Errorf("wait for go: %w", err)
	}
	return claimAll(context.Background(), New(os.Getenv(envTaskClaimer)), os.Getenv(envTaskClaimerName), func(id string) {
		fmt.Println("won " + id)
	})
}

// claimAll is one claimer: list, try one of the first three pending unowned
// tasks (so claimers keep colliding), until none is left.
func claimAll(ctx context.Context, b *Board, name string, won func(id string)) error {
	for {
		tasks, err := b.List(ctx)
		if err != nil {
			return err
		}
		var open []string
		for _, t := range tasks {
			if t.Status == TaskPending && t.Owner == "" {
				open = append(open, t.ID)
			}
		}
		if len(open) == 0 {
			return nil
		}
		id := open[rand.IntN(min(3, len(open)))]
		_, already, err := b.Claim(ctx, id, name)
		switch {
		case err == nil && already:
			return fmt.Errorf("%s: claim of %s reported as already mine, but it was listed unowned", name, id)
		case err == nil:
			won(id)
		case errors.Is(err, ErrTaskTaken) || errors.Is(err, ErrTaskNotPending):
			// lost the race for this one
		default:
			return err
		}
	}
}

// TestClaimRaceGoroutinesAndProcesses: 8 goroutines and 3 OS processes claim
// 50 tasks at once; each task is won exactly once and ends owned by its
// winner. Goroutines alone first, where they win every task between them.
func TestClaimRaceGoroutinesAndProcesses(t *testing.T) {
	t.Run("8 goroutines", func(t *testing.T) { raceClaims(t, 8, 0) })
	t.Run("8 goroutines and 3 processes", func(t *testing.T) { raceClaims(t, 8, 3) })
}

func raceClaims(t *testing.T, goroutines, procs int) {
	const tasks = 50
	path := filepath.Join(t.TempDir(), "tasks", "board.json")
	board := New(path)
	ctx := context.Background()
	for i := 0; i < tasks; i++ {
		if _, err := board.Create(ctx, "lead", NewTask{Subject: fmt.Sprintf("task %d", i)}); err != nil {
			t.Fatal(err)
		}
	}

	var mu sync.Mutex
	wins := map[string][]string{} // task id → who reported winning it
	won := func(who string) func(string) {
		return func(id string) {
			mu.Lock()
			wins[id] = append(wins[id], who)
			mu.Unlock()
		}
	}

	// Processes first, each held at "ready" until everyone can start together.
	type child struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
		out   *bufio.Reader
	}
	children := make([]child, procs)
	for p := range children {
		name := fmt.Sprintf("p%d", p)
		c := exec.Command(os.Args[0], "-test.run=^$")
		c.Env = append(os.Environ(), envTaskClaimer+"="+path, envTaskClaimerName+"="+name, "GORACE=atexit_sleep_ms=0")
		c.Stderr = os.Stderr
		stdin, err := c.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		children[p] = child{c, stdin, bufio.NewReader(stdout)}
		if line, err := children[p].out.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("%s did not get ready: %q %v", name, line, err)
		}
	}

	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, goroutines+procs)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			// Each goroutine has its own Board value, as separate callers would.
			errs <- claimAll(ctx, New(path), fmt.Sprintf("g%d", g), won(fmt.Sprintf("g%d", g)))
		}()
	}
	for p, c := range children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("p%d", p)
			for {
				line, err := c.out.ReadString('\n')
				if id, ok := strings.CutPrefix(strings.TrimSpace(line), "won "); ok {
					won(name)(id)
				}
				if err != nil {
					break
				}
			}
			if err := c.cmd.Wait(); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
				return
			}
			errs <- nil
		}()
	}
	close(start)
	for _, c := range children {
		if _, err := io.WriteString(c.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
		c.stdin.Close()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}

	final, err := board.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(final.Tasks) != tasks {
		t.Fatalf("%d tasks on the board, want %d", len(final.Tasks), tasks)
	}
	perClaimer := map[string]int{}
	for _, task := range final.Tasks {
		w := wins[task.ID]
		if len(w) != 1 {
			t.Errorf("%s was reported won by %v, want exactly one winner", task.ID, w)
			continue
		}
		if task.Status != TaskInProgress || task.Owner != w[0] {
			t.Errorf("%s ends %s owned by %q, but %s won it", task.ID, task.Status, task.Owner, w[0])
		}
		perClaimer[w[0]]++
	}
	if len(wins) != tasks {
		t.Errorf("wins reported for %d ids, want %d: %v", len(wins), tasks, wins)
	}
	// Version counts every write: 50 creates and 50 claims, no more, no fewer.
	if final.Version != 2*tasks {
		t.Errorf("board version %d, want %d (one write per create and per won claim)", final.Version, 2*tasks)
	}
	t.Logf("wins per claimer: %v", perClaimer)
}
