package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/registry"
)

// TestAPausedLeadsLateMessageIsRefused: lead A (`agentteam run`) is
// paused (SIGSTOP, as a starved or frozen process) while its bash command
// waits, and the command then ends. A's owner lease expires on the
// server, and lead B (`run --resume` on another host) takes the team and
// messages bob. A goes on (SIGCONT): its model tells it to message bob,
// and that message is refused, by the server (B claimed the lead's
// sending with the lock) or by A itself once it knows it lost the lock.
// So bob has B's message and not A's, and A ends saying it lost the
// team's owner lock. (A's halt often comes first here: the claims checked
// at the end are what fails without the lead's claim; the server's
// refusal of a lead that does not know yet is team's
// TestALeadThatLostItsOwnerLockSendsNothing.)
func TestAPausedLeadsLateMessageIsRefused(t *testing.T) {
	nt := startNATSTeam(t, "leadfence")
	if err := nt.registry(t).Change(t.Context(), func(c *registry.Config) error {
		now := time.Now().UTC()
		c.Teammates = append(c.Teammates, registry.Member{Name: "bob", Role: "reviewer", Status: registry.StatusIdle, CreatedAt: now, UpdatedAt: now})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	dirA := t.TempDir() // A's commands write only in its workspace (the sandbox)
	started, goOn := filepath.Join(dirA, "started"), filepath.Join(dirA, "go")
	srvA := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("bash", `{"command":"touch `+started+`; while [ ! -e `+goOn+` ]; do sleep 0.02; done"}`)}},
			{ToolCalls: []fakellm.ToolCall{call("send_message", `{"to":"bob","content":"LATE FROM A"}`)}},
			{Content: "A done"},
		},
	}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "A: noted"} }), fakellm.WithAPIKey("test-key"))
	defer srvA.Close()
	srvB := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("send_message", `{"to":"bob","content":"from B"}`)}},
			{Content: "B done"},
		},
	}, func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "B: noted"} }), fakellm.WithAPIKey("test-key"))
	defer srvB.Close()

	waitA, pidA := startBinPID(t, dirA, fakeEnv(srvA), "run", "--permission-mode", "yolo", "--store", nt.url, "review the parser")
	testkit.Eventually(t, time.Minute, "A's command to start", func() bool { _, err := os.Stat(started); return err == nil })
	if err := syscall.Kill(pidA(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := true
	defer func() {
		if paused {
			_ = syscall.Kill(pidA(), syscall.SIGCONT)
		}
	}()
	if err := os.WriteFile(goOn, nil, 0o600); err != nil {
		t.Fatal(err)
	}

	// B takes the team once A's lease has expired.
	dirB := t.TempDir()
	var rB result
	testkit.EventuallyF(t, time.Minute, "B to take the team", func() bool {
		rB = runBin(t, dirB, fakeEnv(srvB), "", "run", "--resume", "--store", nt.url, "go on")
		if rB.code != 0 && !strings.Contains(rB.stderr, "already running team") {
			t.Fatalf("B: exit %d\n%s", rB.code, rB.stderr)
		}
		return rB.code == 0
	}, func() string { return fmt.Sprintf("B: exit %d\n%s", rB.code, rB.stderr) })

	if err := syscall.Kill(pidA(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	paused = false
	rA := waitA()
	if rA.code == 0 || !strings.Contains(rA.stderr, "lost the team's owner lock") {
		t.Errorf("A: exit %d, want it to end saying it lost the owner lock\n%s", rA.code, rA.stderr)
	}
	mb, err := natsstore.OpenMailbox(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, err := mb.ReadAll(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		if m.From == "lead" {
			got = append(got, m.Content)
		}
	}
	if len(got) != 1 || got[0] != "from B" {
		t.Errorf("bob's messages from the lead: %q, want B's alone", got)
	}

	// Each lead claimed the lead's sending with the lock, B last: a
	// message of A's claim, however late, is refused by the server.
	js, err := jetstream.New(nt.nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := js.Stream(ctx, natsstore.StreamName(nt.team))
	if err != nil {
		t.Fatal(err)
	}
	claims := "agentteam." + nt.team + ".sender.lead"
	info, err := st.Info(ctx, jetstream.WithSubjectFilter(claims))
	if err != nil {
		t.Fatal(err)
	}
	if n := info.State.Subjects[claims]; n != 2 {
		t.Fatalf("%d claims of the lead's sending, want 2 (A's and B's)", n)
	}
	first, err := st.GetMsg(ctx, 1, jetstream.WithGetMsgSubject(claims))
	if err != nil {
		t.Fatal(err)
	}
	_, err = mb.AppendAs(ctx, "bob", inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: "A's claim"}, first.Sequence)
	var fenced *natsstore.FencedError
	if !errors.As(err, &fenced) {
		t.Errorf("a message with A's claim: %v, want a *natsstore.FencedError", err)
	}
}
