package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

// holdOwnerLock makes the test process the live owner of ws's team, as a
// running `agentteam run` would be, until the test ends.
func holdOwnerLock(t *testing.T, ws string) {
	t.Helper()
	dir := filepath.Join(ws, ".agentteam", "team")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fl := flock.New(filepath.Join(dir, "owner.lock"))
	if ok, err := fl.TryLock(); err != nil || !ok {
		t.Fatalf("take the owner lock: %v %v", ok, err)
	}
	t.Cleanup(func() { _ = fl.Unlock() })
}

// TestLivenessIsTheOwnerLockNotAPID: a teammate left working whose PID now
// belongs to another live process (here: the test itself, as after PID
// reuse) is shown failed by `team` and brought back by `run --resume`; only
// a process holding the owner lock keeps it working.
func TestLivenessIsTheOwnerLockNotAPID(t *testing.T) {
	ws := t.TempDir()
	registerTeammate(t, ws, "alice", registry.StatusWorking) // PID: this live test process
	if r := runBin(t, ws, nil, "", "send", "--to", "alice", "finish the parser"); r.code != 0 {
		t.Fatalf("send: %s", r.stderr)
	}
	copyDir(t, state(ws), state(ws+"-copy"))
	ownState(t, ws+"-copy")
	t.Cleanup(func() { os.RemoveAll(ws + "-copy") })

	r := runBin(t, ws, nil, "", "team", "--json")
	mustSucceed(t, r, "team --json")
	var shown struct{ Teammates []registry.Member }
	if err := json.Unmarshal([]byte(r.stdout), &shown); err != nil || len(shown.Teammates) != 1 {
		t.Fatalf("team --json: %v\n%s", err, r.stdout)
	}
	if m := shown.Teammates[0]; m.Status != registry.StatusFailed {
		t.Fatalf("alice is %s though no process holds the owner lock (her PID is alive but not agentteam's)", m.Status)
	}
	if !hasEvent(readEvents(t, state(ws, "events.jsonl")), event.EventRepair, "alice") {
		t.Error("events.jsonl has no repair event for alice")
	}

	// The resumed run takes her back and she reads her message.
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" {
			return fakellm.Reply{Content: "alice: parser finished"}
		}
		return fakellm.Reply{Content: "lead: noted"}
	})
	defer srv.Close()
	copyWS := ws + "-copy"
	r = runBin(t, copyWS, fakeEnv(srv), "", "run", "--resume", "carry on")
	mustSucceed(t, r, "run --resume")
	noViolations(t, srv)
	if len(srv.Requests("alice")) == 0 {
		t.Fatalf("alice was skipped by the resumed run:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "alice is idle: resumed") {
		t.Errorf("the resumed run does not say alice came back:\n%s", r.stderr)
	}
	assertEachMessageOnce(t, copyWS, "alice")
	store := inbox.NewStore(state(copyWS, "inbox"))
	if st, err := store.Stats(t.Context(), "alice"); err != nil || st.Unread != 0 {
		t.Errorf("alice's inbox: %+v %v", st, err)
	}
}

// TestTeamLeavesAnOwnedTeamAlone: while a process holds the owner lock,
// `team` changes no status, whatever the PIDs say.
func TestTeamLeavesAnOwnedTeamAlone(t *testing.T) {
	ws := t.TempDir()
	dead := 1 << 22 // above any pid_max: certainly not a live process
	ownState(t, ws)
	reg := registry.NewRegistry(state(ws, "team", "config.json"), "")
	if err := reg.Change(t.Context(), func(c *registry.Config) error {
		now := time.Now().UTC()
		c.Teammates = append(c.Teammates, registry.Member{Name: "bob", Role: "tester", Status: registry.StatusWorking, PID: dead, CreatedAt: now, UpdatedAt: now})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	holdOwnerLock(t, ws)
	r := runBin(t, ws, nil, "", "team", "--json")
	mustSucceed(t, r, "team --json")
	if m := findMember(t, readRegistry(t, ws), "bob"); m.Status != registry.StatusWorking {
		t.Fatalf("bob is %s while the team's owner lock is held; `team` must leave a live team alone", m.Status)
	}
}
