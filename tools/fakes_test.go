package tools

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/agentteam/agentteam/workspace"
)

type sent struct{ from, to, content string }

// fakeMessenger records what was sent; err, if set, is returned instead.
type fakeMessenger struct {
	mu         sync.Mutex
	sent       []sent
	broadcasts []sent
	reach      []string
	err        error
}

func (m *fakeMessenger) Send(ctx context.Context, from, to, content string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	m.sent = append(m.sent, sent{from, to, content})
	return nil
}

func (m *fakeMessenger) Broadcast(ctx context.Context, from, content string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	m.broadcasts = append(m.broadcasts, sent{from: from, content: content})
	return m.reach, nil
}

type spawned struct{ name, role, prompt string }

type fakeTeam struct {
	mu       sync.Mutex
	spawned  []spawned
	spawnErr error
	describe string
	descErr  error
}

func (f *fakeTeam) SpawnTeammate(ctx context.Context, spec SpawnSpec) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.spawnErr != nil {
		return f.spawnErr
	}
	f.spawned = append(f.spawned, spawned{spec.Name, spec.Role, spec.Prompt})
	return nil
}

func (f *fakeTeam) Describe(ctx context.Context) (string, error) { return f.describe, f.descErr }

type fakeInbox struct {
	text      string
	err       error
	committed int
}

func (f *fakeInbox) ReadInbox(ctx context.Context) (string, func() error, error) {
	if f.err != nil {
		return "", nil, f.err
	}
	return f.text, func() error { f.committed++; return nil }, nil
}

// testEnv is an Env over a fresh workspace with recording fakes.
func testEnv(t *testing.T) (Env, *fakeMessenger, *fakeTeam, *fakeInbox) {
	t.Helper()
	ws, err := workspace.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.Init(); err != nil {
		t.Fatal(err)
	}
	m, tm, in := &fakeMessenger{}, &fakeTeam{}, &fakeInbox{}
	env := Env{Agent: "lead", Workspace: ws, Messenger: m, Inbox: in, Team: tm}
	return env.withDefaults(), m, tm, in
}

// mustOK fails unless r is a success whose content contains want.
func mustOK(t *testing.T, r Result, want string) {
	t.Helper()
	if r.IsError {
		t.Fatalf("want success, got error result: %s", r.Content)
	}
	if !strings.Contains(r.Content, want) {
		t.Fatalf("result %q does not contain %q", r.Content, want)
	}
}

// mustErr fails unless r is an error result whose content contains want.
func mustErr(t *testing.T, r Result, want string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want error result, got success: %s", r.Content)
	}
	if !strings.Contains(r.Content, want) {
		t.Fatalf("error %q does not contain %q", r.Content, want)
	}
}

// Handoff completes fakeProtocols (declared with the protocol tool tests).
func (f *fakeProtocols) Handoff(ctx context.Context, from string, spec HandoffSpec) (string, error) {
	f.calls = append(f.calls, protoCall{"Handoff", from, spec.To, false, spec.Task + "|" + spec.Reason + "|" + spec.Context})
	return "handed", f.err
}
