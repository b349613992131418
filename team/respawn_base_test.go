package team

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/testutil/testgit"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/hosts"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/team/worktree"
	"github.com/agentteam/agentteam/workspace"
)

// TestARespawnStartsFromTheLeadsCommit: alice is spawned in a worktree
// from the lead's commit (lead.txt), which neither worker's clone holds.
// Worker w1 claims her (the registry keeps the base) and dies before she
// pushes anything; the lead's look respawns her, and worker w2 takes the
// respawn: her new worktree starts from the lead's commit, fetched from
// the team's remote, not from w2's HEAD. Fails without the base kept in
// the registry and carried by reapDead's request (no lead.txt on w2).
func TestARespawnStartsFromTheLeadsCommit(t *testing.T) {
	ctx := context.Background()
	url := natsURL(t)
	const teamName = "rb"
	bare, lead, ws2, head := teamRemote(t)
	ws1 := cloneWorkspace(t, bare)
	leadW := worktree.New(lead, registry.NewRegistry(lead.RegistryPath(), ""), nil)
	leadW.ShareBasesTo("origin", "")
	base, err := leadW.ShareBase(ctx, "alice", true)
	if err != nil || base != head {
		t.Fatalf("ShareBase = %q, %v; want the lead's HEAD %s", base, err, head)
	}

	answer := make(chan struct{})
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent == "alice" && c.N == 0 {
			<-answer // w1 dies meanwhile
			return fakellm.Reply{Content: "alice: too late"}
		}
		return fakellm.Reply{Content: c.Agent + ": done"}
	}))
	defer srv.Close()
	defer close(answer) // before the server's Close, which waits for w1's call
	mb, reg := fenceTeam(t, url, teamName)
	worker := func(id string, ws *workspace.Workspace) (*Team, *memQueue) {
		t.Helper()
		q := &memQueue{jobs: make(chan *memJob, 4), done: map[string]string{}}
		tm, err := OpenWorker(ctx, fenceWorker(t, url, teamName, srv.URL(), ws, q, hosts.Options{ID: id, Host: id, GitRemote: "origin"}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = tm.Close(context.Background()) })
		return tm, q
	}
	alice := func() registry.Member {
		c, err := reg.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return c.Teammates[c.Find("alice")]
	}
	aliceIs := func() string { return fmt.Sprintf("alice is %+v", alice()) }

	_, q1 := worker("w1", ws1)
	if err := q1.Publish(ctx, "s1", signedAsLead(t, mb, hosts.Request{ID: "s1", Name: "alice", Role: "programmer", From: inbox.LeadName,
		Isolation: worktree.IsolationWorktree, Base: base, Deadline: time.Now().Add(time.Hour)})); err != nil {
		t.Fatal(err)
	}
	testkit.EventuallyF(t, time.Minute, "alice working on w1", func() bool {
		m := alice()
		return m.Status == registry.StatusWorking && m.Worker == "w1" && len(srv.Requests("alice")) == 1
	}, aliceIs)
	if m := alice(); m.Base != head || m.PushedCommit != "" {
		t.Fatalf("w1's claim keeps base %q (want %s), pushed %q (want none)", m.Base, head, m.PushedCommit)
	}

	// w1's heartbeat is gone: the lead's look (reapDead, run here by w2's
	// hosting, as the lead's process would) respawns alice, and w2 takes her.
	w2, _ := worker("w2", ws2)
	w2.leadSign = testLead(t, mb)
	w2.hosting.Reap(map[string]bool{"w2": true})
	testkit.EventuallyF(t, time.Minute, "alice respawned on w2 and idle", func() bool {
		m := alice()
		return m.Status == registry.StatusIdle && m.Worker == "w2" && m.SpawnID != "s1"
	}, aliceIs)
	msgs, _, err := mb.ReadAll(ctx, inbox.LeadName)
	if err != nil {
		t.Fatal(err)
	}
	var res string
	for _, m := range msgs {
		if m.From == "alice" && m.Type == inbox.TypeResult {
			res = m.Content
		}
	}
	if !strings.HasPrefix(res, "alice: done") {
		t.Fatalf("alice's result from w2: %q", res)
	}
	m := alice()
	if m.BaseNote != "" || strings.Contains(res, "Note:") {
		t.Fatalf("alice's respawn is noted as not from the lead's commit: %q\n%s", m.BaseNote, res)
	}
	if _, err := os.Stat(filepath.Join(ws2.Root, m.Worktree, "lead.txt")); err != nil {
		t.Fatalf("alice's worktree on w2 lacks the lead's file: %v", err)
	}
	if got := strings.TrimSpace(testgit.Git(t, ws2.Root, "merge-base", worktree.BranchPrefix+"alice", head)); got != head {
		t.Fatalf("alice's branch on w2 does not start from the lead's commit %s (merge base %s)", head, got)
	}
}
