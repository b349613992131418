package team

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/internal/testutil/testfs"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/tools"
)

// A path the gate finds refused (a link into .agentteam/ or out of the
// workspace) must be refused by the gate, not left to the tool: a
// teammate swapping the link for a directory between the two would get
// its write run without anyone asked.
func TestTheGateCannotBeRacedIntoAllowingAWrite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target func(root string) string
	}{
		{"link into the state", func(root string) string { return filepath.Join(root, ".agentteam") }},
		{"link out", func(string) string { return t.TempDir() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fakellm.New(func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "done"} })
			t.Cleanup(srv.Close)
			// Ask mode, nobody to answer: no write may run at all.
			tm := newTestTeam(t, srv, Options{Permissions: &permgate.Options{Policy: permission.Policy{Mode: permission.ModeAsk}}})
			root := tm.ws.Root
			sub, aside := filepath.Join(root, "sub"), filepath.Join(root, "aside")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tc.target(root), aside); err != nil {
				t.Fatal(err)
			}
			stopSwaps := testfs.Swap(sub, aside)
			set := tools.ForTeammate(tools.Env{Agent: "alice", Workspace: tm.ws, Permission: tm.perms.Gate("alice", tm.ws)})
			var ran atomic.Int64
			var callers sync.WaitGroup
			for w := range 4 {
				callers.Go(func() {
					for i := range 250 {
						args := fmt.Sprintf(`{"path":"sub/w-%d-%d.txt","content":"unasked\n"}`, w, i)
						if r := set.Call(context.Background(), tools.WriteFileName, args); !r.IsError {
							ran.Add(1)
						}
					}
				})
			}
			callers.Wait()
			if swaps, _ := stopSwaps(); swaps < 100 {
				t.Fatalf("only %d swaps: the race was not run", swaps)
			}
			if n := ran.Load(); n > 0 {
				t.Fatalf("%d of 1000 writes ran in ask mode with nobody to ask", n)
			}
		})
	}
}
