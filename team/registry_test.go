package team

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/team/registry"
)

// TestMain lets the test binary act as a registry updater, or an inbox
// sender, in a child process.
func TestMain(m *testing.M) {
	if path := os.Getenv("AGENTTEAM_REGISTRY_UPDATER"); path != "" {
		n, _ := strconv.Atoi(os.Getenv("AGENTTEAM_REGISTRY_UPDATES"))
		if err := bumpTurns(path, n); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if os.Getenv(envAppendDir) != "" {
		if err := appendFromEnv(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Whose workspaces are whose: recorded in a temporary state directory.
	state, err := os.MkdirTemp("", "agentteam-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	os.RemoveAll(state)
	os.Exit(code)
}

// bumpTurns makes n status updates, each incrementing alice's turns.
func bumpTurns(path string, n int) error {
	reg := registry.NewRegistry(path, "")
	statuses := []registry.Status{registry.StatusQueued, registry.StatusWorking, registry.StatusIdle}
	for i := 0; i < n; i++ {
		if err := reg.ChangeStatus(context.Background(), "alice", statuses[i%3], func(m *registry.Member) { m.Turns++ }); err != nil {
			return err
		}
	}
	return nil
}

func seedRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	reg := registry.NewRegistry(filepath.Join(t.TempDir(), "config.json"), "")
	err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates, registry.Member{Name: "alice", Role: "programmer", Status: registry.StatusIdle, CreatedAt: time.Now()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func TestRegistryConcurrentProcessesLoseNoUpdate(t *testing.T) {
	reg := seedRegistry(t)
	before, _ := reg.Read(t.Context())
	const procs, each = 4, 200
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := 0; p < procs; p++ {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "AGENTTEAM_REGISTRY_UPDATER="+reg.Path(), "AGENTTEAM_REGISTRY_UPDATES="+strconv.Itoa(each))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("updater: %v: %s", err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	after, err := reg.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if got := after.Version - before.Version; got != procs*each {
		t.Fatalf("version grew by %d, want %d", got, procs*each)
	}
	if got := after.Teammates[0].Turns; got != procs*each {
		t.Fatalf("turns = %d, want %d: updates were lost", got, procs*each)
	}
}

func TestRegistryConcurrentGoroutinesAndReadersSeeWholeFiles(t *testing.T) {
	reg := seedRegistry(t)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				close(readErr)
				return
			default:
			}
			data, err := os.ReadFile(reg.Path())
			if err != nil {
				readErr <- err
				return
			}
			var c registry.Config
			if err := json.Unmarshal(data, &c); err != nil {
				readErr <- fmt.Errorf("reader saw a half-written registry: %v", err)
				return
			}
		}
	}()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := bumpTurns(reg.Path(), each); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-readErr; err != nil {
		t.Fatal(err)
	}
	c, _ := reg.Read(t.Context())
	if c.Teammates[0].Turns != writers*each {
		t.Fatalf("turns = %d, want %d", c.Teammates[0].Turns, writers*each)
	}
}

func TestRepairDeadMarksOrphansFailed(t *testing.T) {
	reg := registry.NewRegistry(filepath.Join(t.TempDir(), "config.json"), "")
	now := time.Now()
	err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = []registry.Member{
			{Name: "dead", Status: registry.StatusWorking, PID: 999999, CreatedAt: now},
			{Name: "live", Status: registry.StatusWorking, PID: os.Getpid(), CreatedAt: now.Add(time.Second)},
			{Name: "idle", Status: registry.StatusIdle, PID: 999999, CreatedAt: now.Add(2 * time.Second)},
			{Name: "queued", Status: registry.StatusQueued, CreatedAt: now.Add(3 * time.Second)},
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	alive := func(pid int) bool { return pid == os.Getpid() }
	got, err := reg.RepairDead(t.Context(), alive)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[dead queued]" {
		t.Fatalf("repaired %v, want [dead queued]", got)
	}
	c, _ := reg.Read(t.Context())
	want := map[string]registry.Status{"dead": registry.StatusFailed, "live": registry.StatusWorking, "idle": registry.StatusIdle, "queued": registry.StatusFailed}
	for _, m := range c.Teammates {
		if m.Status != want[m.Name] {
			t.Errorf("%s: status %s, want %s", m.Name, m.Status, want[m.Name])
		}
	}
	v := c.Version
	if again, _ := reg.RepairDead(t.Context(), alive); len(again) != 0 {
		t.Fatalf("second repair changed %v", again)
	}
	if c2, _ := reg.Read(t.Context()); c2.Version != v {
		t.Fatalf("a repair with nothing to do bumped the version")
	}
}

func TestRegistryCorruptFileIsAClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := registry.NewRegistry(path, "").Read(t.Context())
	if err == nil {
		t.Fatal("want an error for a corrupt registry")
	}
	if want := "is not valid JSON"; !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not say %q", err, want)
	}
}
