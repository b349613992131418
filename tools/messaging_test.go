package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestSendMessage(t *testing.T) {
	env, m, _, _ := testEnv(t)
	env.Agent = "alice"
	mustOK(t, ForTeammate(env).Call(context.Background(), "send_message", `{"to":"lead","content":"done"}`), "Message sent to lead")
	if len(m.sent) != 1 || m.sent[0] != (sent{"alice", "lead", "done"}) {
		t.Fatalf("sent = %+v", m.sent)
	}
}

func TestSendMessageRefusals(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"path traversal", `{"to":"../x","content":"hi"}`, "invalid recipient"},
		{"slash", `{"to":"a/b","content":"hi"}`, "invalid recipient"},
		{"empty to", `{"to":"","content":"hi"}`, "invalid recipient: agent name is empty"},
		{"self", `{"to":"alice","content":"hi"}`, "cannot send a message to yourself"},
		{"empty content", `{"to":"bob","content":""}`, `"content" must not be empty`},
		{"missing content", `{"to":"bob"}`, `missing required argument "content"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, m, _, _ := testEnv(t)
			env.Agent = "alice"
			before := dirEntries(t, env.Workspace.Root)
			mustErr(t, ForTeammate(env).Call(context.Background(), "send_message", tc.args), tc.want)
			if len(m.sent) != 0 {
				t.Fatalf("Messenger.Send called for a refused call: %+v", m.sent)
			}
			if after := dirEntries(t, env.Workspace.Root); after != before {
				t.Fatalf("workspace changed by a refused send: %d entries, was %d", after, before)
			}
		})
	}
}

// dirEntries counts everything under root, so a test can see that nothing was touched.
func dirEntries(t *testing.T, root string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Dir(root), func(string, os.DirEntry, error) error { n++; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestSendMessageMessengerError(t *testing.T) {
	env, m, _, _ := testEnv(t)
	m.err = errors.New(`no agent named "ghost"`)
	mustErr(t, ForLead(env).Call(context.Background(), "send_message", `{"to":"ghost","content":"hi"}`), `could not send to ghost: no agent named "ghost"`)
}

func TestBroadcast(t *testing.T) {
	tests := []struct {
		name  string
		reach []string
		want  string
	}{
		{"some", []string{"alice", "bob"}, "Broadcast sent to 2 teammate(s): alice, bob."},
		{"none", nil, "reached nobody"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env, m, _, _ := testEnv(t)
			m.reach = tc.reach
			mustOK(t, ForLead(env).Call(context.Background(), "broadcast", `{"content":"stand-up"}`), tc.want)
			if len(m.broadcasts) != 1 || m.broadcasts[0] != (sent{from: "lead", content: "stand-up"}) {
				t.Fatalf("broadcasts = %+v", m.broadcasts)
			}
		})
	}
}

func TestBroadcastRefusals(t *testing.T) {
	env, m, _, _ := testEnv(t)
	s := ForLead(env)
	mustErr(t, s.Call(context.Background(), "broadcast", `{"content":"  "}`), `"content" must not be empty`)
	mustErr(t, s.Call(context.Background(), "broadcast", `{}`), `missing required argument "content"`)
	m.err = errors.New("registry unreadable")
	mustErr(t, s.Call(context.Background(), "broadcast", `{"content":"x"}`), "broadcast failed: registry unreadable")
	if len(m.broadcasts) != 0 {
		t.Fatalf("broadcasts = %+v", m.broadcasts)
	}
}

func TestReadInbox(t *testing.T) {
	env, _, _, in := testEnv(t)
	in.text = "[from bob] tests pass"
	r := ForTeammate(env).Call(context.Background(), "read_inbox", "")
	mustOK(t, r, "[from bob] tests pass")
	if in.committed != 0 {
		t.Fatal("messages were marked read before the result was recorded")
	}
	if r.AfterRecord == nil {
		t.Fatal("AfterRecord is nil; messages would never be marked read")
	}
	if err := r.AfterRecord(); err != nil {
		t.Fatal(err)
	}
	if in.committed != 1 {
		t.Fatalf("AfterRecord did not run the inbox's commit (committed=%d)", in.committed)
	}
}

func TestReadInboxEmptyAndError(t *testing.T) {
	env, _, _, in := testEnv(t)
	s := ForTeammate(env)
	mustOK(t, s.Call(context.Background(), "read_inbox", "{}"), "no unread messages")
	in.err = errors.New("inbox file locked")
	mustErr(t, s.Call(context.Background(), "read_inbox", "{}"), "internal error: read_inbox: read inbox: inbox file locked")
}
