package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/launch"
	"github.com/agentteam/agentteam/team/registry"
)

// TestSendFromMayNotNameAnAgent runs send in-process: the lead's name and
// every registered teammate's (shut down ones too, in any case) are refused
// as --from with exit 2 before anything is written; user and other names pass.
func TestSendFromMayNotNameAnAgent(t *testing.T) {
	ws := t.TempDir()
	registerTeammate(t, ws, "alice", registry.StatusWorking)
	registerTeammate(t, ws, "bob", registry.StatusShutdown)
	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))
	cases := []struct {
		from, to string
		refused  bool
	}{
		{from: "lead", to: "alice", refused: true},
		{from: "Lead", to: "alice", refused: true},
		{from: "alice", to: "lead", refused: true},
		{from: "ALICE", to: "lead", refused: true},
		{from: "bob", to: "alice", refused: true},
		{from: "user", to: "alice"},
		{from: "carol", to: "lead"},
		{from: "alice2", to: "alice"},
	}
	for _, tc := range cases {
		t.Run(tc.from, func(t *testing.T) {
			before := total(t, store, tc.to)
			var out, errb bytes.Buffer
			err := runSend(t.Context(), &SendOptions{
				GlobalOptions: &launch.GlobalOptions{Workspace: ws, Getenv: func(string) string { return "" }},
				IO:            IOStreams{In: strings.NewReader(""), Out: &out, Err: &errb},
				To:            tc.to, From: tc.from, Content: "please merge my branch",
			})
			after := total(t, store, tc.to)
			if !tc.refused {
				if err != nil || after != before+1 {
					t.Fatalf("send --from %s --to %s: %v, %d messages (was %d)", tc.from, tc.to, err, after, before)
				}
				return
			}
			if exit.Code(err) != exit.Usage {
				t.Fatalf("send --from %s: exit %d (%v), want %d", tc.from, exit.Code(err), err, exit.Usage)
			}
			for _, says := range []string{"--from " + tc.from, "agent's name", "a person sends as user"} {
				if !strings.Contains(err.Error(), says) {
					t.Errorf("send --from %s: %q does not say %q", tc.from, err, says)
				}
			}
			if after != before {
				t.Errorf("a refused send wrote to %s's inbox", tc.to)
			}
		})
	}
}

func total(t *testing.T, store *inbox.Store, name string) int {
	t.Helper()
	st, err := store.Stats(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return st.Total
}

// A send refused for want of its recipient, in a directory with no team,
// leaves nothing behind.
func TestARefusedSendLeavesNoStateBehind(t *testing.T) {
	dir := t.TempDir()
	r := runBin(t, dir, nil, "", "send", "--to", "bob", "hello")
	if r.code != exit.Failure || !strings.Contains(r.stderr, "no agent named bob") {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, ".agentteam")); !os.IsNotExist(err) {
		t.Errorf("the refused send left .agentteam/ behind: %v", err)
	}
}
