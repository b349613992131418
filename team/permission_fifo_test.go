//go:build unix

package team

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/permgate"
	"github.com/agentteam/agentteam/tools"
)

// The gate reads the file a write would change to show its diff; on a
// FIFO that read must not wait for a writer. Asked about, the call is
// refused at once (nobody to answer); allowed, the tool refuses the FIFO.
func TestTheGateNeverWaitsOnAFIFO(t *testing.T) {
	for _, tc := range []struct {
		mode permission.Mode
		want string
	}{
		{permission.ModeAsk, "needs approval"},
		{permission.ModeAutoEdit, "notes is a named pipe (FIFO), not a regular file"},
	} {
		for _, call := range []struct{ tool, args string }{
			{tools.EditFileName, `{"path":"notes","old_text":"a","new_text":"b"}`},
			{tools.WriteFileName, `{"path":"notes","content":"x"}`},
		} {
			t.Run(string(tc.mode)+"/"+call.tool, func(t *testing.T) {
				srv := fakellm.New(func(fakellm.Call) fakellm.Reply { return fakellm.Reply{Content: "done"} })
				t.Cleanup(srv.Close)
				tm := newTestTeam(t, srv, Options{Permissions: &permgate.Options{Policy: permission.Policy{Mode: tc.mode}}})
				fifo := filepath.Join(tm.ws.Root, "notes")
				if err := syscall.Mkfifo(fifo, 0o644); err != nil {
					t.Fatal(err)
				}
				set := tools.ForTeammate(tools.Env{Agent: "alice", Workspace: tm.ws, Permission: tm.perms.Gate("alice", tm.ws)})
				r := testkit.BoundedOnFIFO(t, fifo, func() tools.Result { return set.Call(context.Background(), call.tool, call.args) })
				if !r.IsError || !strings.Contains(r.Content, tc.want) {
					t.Fatalf("%s on a FIFO: %q, want a refusal saying %q", call.tool, r.Content, tc.want)
				}
				if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
					t.Errorf("the FIFO was replaced (err %v)", err)
				}
			})
		}
	}

}
