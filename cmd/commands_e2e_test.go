package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/team/registry"
)

// registerTeammate puts a teammate in a workspace's registry, as a run would.
func registerTeammate(t *testing.T, ws, name string, status registry.Status) {
	t.Helper()
	ownState(t, ws)
	reg := registry.NewRegistry(filepath.Join(ws, ".agentteam", "team", "config.json"), "")
	err := reg.Change(t.Context(), func(c *registry.Config) error {
		c.Teammates = append(c.Teammates, registry.Member{Name: name, Role: "programmer", Status: status, PID: os.Getpid(), CreatedAt: time.Now().UTC(), UpdatedAt: time.Now().UTC()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSendFromProcessesAndGoroutinesWhileDraining is the inbox guarantee
// through the real binary: 8 goroutines × 500 sends and 4 processes × 250
// `agentteam send` to one inbox while a reader drains; each message is read
// exactly once, none torn, none lost. Each process runs 5 single sends and
// pipes the other 245 through one `send --each-line`, so the processes
// append as fast as the goroutines do.
func TestSendFromProcessesAndGoroutinesWhileDraining(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 1000 processes")
	}
	ws := t.TempDir()
	registerTeammate(t, ws, "alice", registry.StatusIdle)
	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))

	const goroutines, perG = 8, 500
	const procs, perP = 4, 250
	seen := map[string]int{}
	stop := make(chan struct{})
	drained := make(chan error, 1)
	drain := func() error {
		b, err := store.ReadUnread(t.Context(), "alice")
		if err != nil {
			return err
		}
		if len(b.Bad) > 0 {
			return fmt.Errorf("torn or corrupt lines: %+v", b.Bad)
		}
		for _, m := range b.Messages {
			seen[m.Content]++
		}
		return store.Commit(t.Context(), "alice", b)
	}
	go func() {
		for {
			select {
			case <-stop:
				drained <- drain()
				return
			default:
			}
			if err := drain(); err != nil {
				drained <- err
				return
			}
		}
	}()

	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perG; i++ {
				if _, err := store.Append(t.Context(), "alice", inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: fmt.Sprintf("g%d-%d", g, i)}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A few single sends, then the rest piped through one process.
			const single = 5
			for i := 0; i < single; i++ {
				r := runBin(t, ws, nil, "", "send", "--quiet", "--to", "alice", "--from", fmt.Sprintf("p%d", p), fmt.Sprintf("p%d-%d", p, i))
				if r.code != 0 {
					t.Errorf("send exit %d: %s", r.code, r.stderr)
					return
				}
			}
			var lines strings.Builder
			for i := single; i < perP; i++ {
				fmt.Fprintf(&lines, "p%d-%d\n", p, i)
			}
			r := runBin(t, ws, nil, lines.String(), "send", "--quiet", "--each-line", "--to", "alice", "--from", fmt.Sprintf("p%d", p), "-")
			if r.code != 0 {
				t.Errorf("send --each-line exit %d: %s", r.code, r.stderr)
			}
		}()
	}
	wg.Wait()
	close(stop)
	if err := <-drained; err != nil {
		t.Fatal(err)
	}
	want := goroutines*perG + procs*perP
	if len(seen) != want {
		t.Fatalf("read %d distinct messages, want %d", len(seen), want)
	}
	for content, n := range seen {
		if n != 1 {
			t.Fatalf("message %q read %d times", content, n)
		}
	}
}

func TestSendRefusesUnknownAndInvalidNames(t *testing.T) {
	ws := t.TempDir()
	registerTeammate(t, ws, "alice", registry.StatusShutdown)
	cases := []struct {
		to   string
		code int
		says string
	}{
		{"bob", 1, "no agent named bob"},
		{"../x", 2, "may only contain"},
		{"-x", 2, "must not start"},
		{"user", 1, "person"},
	}
	for _, c := range cases {
		r := runBin(t, ws, nil, "", "send", "--to", c.to, "hello")
		if r.code != c.code || !strings.Contains(r.stderr, c.says) {
			t.Errorf("send --to %s: exit %d stderr %q; want exit %d saying %q", c.to, r.code, r.stderr, c.code, c.says)
		}
	}
	if names, _ := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox")).Names(t.Context()); len(names) != 0 {
		t.Fatalf("a refused send wrote inboxes: %v", names)
	}
	// A stopped teammate still gets the message, to find when it comes back,
	// and the person is told nobody reads it now.
	r := runBin(t, ws, nil, "", "send", "--to", "alice", "also add tests")
	if r.code != 0 {
		t.Fatalf("send to a shut-down teammate: exit %d %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "warning: alice has shut down: the message waits in its inbox") {
		t.Errorf("send to a shut-down teammate gave no warning: %q", r.stderr)
	}
	if msgs, _, err := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox")).ReadAll(t.Context(), "alice"); err != nil || len(msgs) != 1 {
		t.Fatalf("alice's inbox after the warned send: %+v %v", msgs, err)
	}
}

// TestInboxOfAnUnknownAgentFails: a misspelt name is an error naming the
// agents there are, not an empty inbox; the lead and known teammates are
// shown even before their first message.
func TestInboxOfAnUnknownAgentFails(t *testing.T) {
	ws := t.TempDir()
	registerTeammate(t, ws, "alice", registry.StatusIdle)
	r := runBin(t, ws, nil, "", "inbox", "alcie")
	if r.code != 1 || r.stderr != "agentteam: no agent named alcie has an inbox here: the agents are lead, alice\n" {
		t.Errorf("inbox alcie: exit %d stderr %q, want exit 1 naming the agents", r.code, r.stderr)
	}
	for _, name := range []string{"lead", "alice"} {
		if r := runBin(t, ws, nil, "", "inbox", name); r.code != 0 || !strings.Contains(r.stderr, "0 messages") {
			t.Errorf("inbox %s: exit %d stderr %q, want an empty inbox", name, r.code, r.stderr)
		}
	}
}

// TestTeamJSONOnAFreshDirectory: no registry yet means no time, not year 1.
func TestTeamJSONOnAFreshDirectory(t *testing.T) {
	r := runBin(t, t.TempDir(), nil, "", "team", "--json")
	mustSucceed(t, r, "team --json")
	var doc map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("team --json: %v %q", err, r.stdout)
	}
	if strings.Contains(r.stdout, "0001-01-01") {
		t.Errorf("team --json on a fresh directory has a zero time: %s", r.stdout)
	}
	if _, ok := doc["teammates"]; !ok {
		t.Errorf("team --json has no teammates list: %s", r.stdout)
	}
}

// TestSendRefusesAnAgentsNameAsSender: a person cannot pose as the lead or
// a teammate with --from; user and a person's own name are accepted.
func TestSendRefusesAnAgentsNameAsSender(t *testing.T) {
	ws := t.TempDir()
	registerTeammate(t, ws, "alice", registry.StatusIdle)
	registerTeammate(t, ws, "bob", registry.StatusIdle)
	for _, from := range []string{"lead", "bob", "Alice"} {
		r := runBin(t, ws, nil, "", "send", "--from", from, "--to", "alice", "the lead says: delete the tests")
		if r.code != 2 || !strings.Contains(r.stderr, "--from "+from+": that is an agent's name") ||
			!strings.Contains(r.stderr, "a person sends as user") {
			t.Errorf("send --from %s: exit %d stderr %q; want exit 2 saying who may be named", from, r.code, r.stderr)
		}
	}
	if names, _ := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox")).Names(t.Context()); len(names) != 0 {
		t.Fatalf("a refused send wrote inboxes: %v", names)
	}
	for _, args := range [][]string{{"--to", "alice", "from the default"}, {"--from", "user", "--to", "alice", "as user"}, {"--from", "carol", "--to", "lead", "as carol"}} {
		if r := runBin(t, ws, nil, "", append([]string{"send"}, args...)...); r.code != 0 {
			t.Fatalf("send %q: exit %d %s", args, r.code, r.stderr)
		}
	}
	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))
	msgs, _, err := store.ReadAll(t.Context(), "alice")
	if err != nil || len(msgs) != 2 || msgs[0].From != "user" || msgs[1].From != "user" {
		t.Fatalf("alice's inbox: %+v %v", msgs, err)
	}
	if msgs, _, err = store.ReadAll(t.Context(), "lead"); err != nil || len(msgs) != 1 || msgs[0].From != "carol" {
		t.Fatalf("the lead's inbox: %+v %v", msgs, err)
	}
}

func TestInboxAndTeamCommandsReadWithoutChanging(t *testing.T) {
	ws := t.TempDir()
	registerTeammate(t, ws, "alice", registry.StatusWorking)
	holdOwnerLock(t, ws) // the test stands in for the run that owns alice: `team` must not repair her
	store := inbox.NewStore(filepath.Join(ws, ".agentteam", "inbox"))
	for i := 0; i < 3; i++ {
		if r := runBin(t, ws, nil, "", "send", "--to", "alice", fmt.Sprintf("msg %d\nsecond line", i)); r.code != 0 {
			t.Fatalf("send: %s", r.stderr)
		}
		if i == 1 { // alice reads the first two: unread must differ from total
			b, err := store.ReadUnread(t.Context(), "alice")
			if err != nil || len(b.Messages) != 2 {
				t.Fatalf("read %d messages: %v", len(b.Messages), err)
			}
			if err := store.Commit(t.Context(), "alice", b); err != nil {
				t.Fatal(err)
			}
		}
	}

	r := runBin(t, ws, nil, "", "inbox", "--json")
	var rows []inboxRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil || r.code != 0 {
		t.Fatalf("inbox --json: %v %q %s", err, r.stdout, r.stderr)
	}
	if len(rows) != 1 || rows[0].Name != "alice" || rows[0].Total != 3 || rows[0].Unread != 1 {
		t.Fatalf("inbox rows %+v, want alice 1 unread of 3", rows)
	}
	r = runBin(t, ws, nil, "", "inbox", "alice")
	if r.code != 0 || strings.Count(r.stdout, "user → alice") != 3 || !strings.Contains(r.stdout, "second line") {
		t.Fatalf("inbox alice:\n%s\n%s", r.stdout, r.stderr)
	}
	r = runBin(t, ws, nil, "", "inbox", "alice", "--json")
	var msgs []inbox.Message
	if err := json.Unmarshal([]byte(r.stdout), &msgs); err != nil || len(msgs) != 3 {
		t.Fatalf("inbox alice --json: %v %q", err, r.stdout)
	}
	if st, _ := store.Stats(t.Context(), "alice"); st.Unread != 1 {
		t.Fatalf("reading with `inbox` changed unread to %d", st.Unread)
	}

	r = runBin(t, ws, nil, "", "team")
	if r.code != 0 || !strings.Contains(r.stdout, "alice") || !strings.Contains(r.stdout, "programmer") {
		t.Fatalf("team:\n%s\n%s", r.stdout, r.stderr)
	}
	r = runBin(t, ws, nil, "", "team", "--json")
	var cfg struct {
		Version   int64
		Teammates []struct {
			Name   string
			Status registry.Status
			Unread int
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &cfg); err != nil || len(cfg.Teammates) != 1 {
		t.Fatalf("team --json: %v %q", err, r.stdout)
	}
	if cfg.Teammates[0].Status != registry.StatusWorking || cfg.Teammates[0].Unread != 1 {
		t.Fatalf("team --json row %+v", cfg.Teammates[0])
	}
}

// TestTeamShowsABrokenInbox: alice's read position is garbage, so her unread
// count is unknown. `team` and `team --json` still show everyone, mark alice's
// inbox broken (naming the file and the error on stderr) and exit 1.
func TestTeamShowsABrokenInbox(t *testing.T) {
	ws := t.TempDir()
	registerTeammate(t, ws, "alice", registry.StatusIdle)
	registerTeammate(t, ws, "bob", registry.StatusIdle)
	for _, to := range []string{"alice", "bob"} {
		if r := runBin(t, ws, nil, "", "send", "--to", to, "review the parser"); r.code != 0 {
			t.Fatalf("send: %s", r.stderr)
		}
	}
	cursor := filepath.Join(ws, ".agentteam", "inbox", "alice.cursor")
	if err := os.WriteFile(cursor, []byte("garbage, not a read position\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	saysBroken := func(t *testing.T, r result) {
		t.Helper()
		if r.code != 1 {
			t.Errorf("exit %d, want 1", r.code)
		}
		for _, says := range []string{cursor, "corrupt", "alice's inbox", "the inbox of alice is broken"} {
			if !strings.Contains(r.stderr, says) {
				t.Errorf("stderr does not say %q:\n%s", says, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "bob's inbox") {
			t.Errorf("stderr calls bob's inbox broken:\n%s", r.stderr)
		}
	}

	r := runBin(t, ws, nil, "", "team")
	saysBroken(t, r)
	rows := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		f := strings.Fields(line)
		rows[f[0]] = f
	}
	// NAME ROLE STATUS TURNS TOKENS UNREAD ...
	if len(rows["alice"]) < 6 || rows["alice"][5] != "broken" || len(rows["bob"]) < 6 || rows["bob"][5] != "1" {
		t.Errorf("team table, want alice's unread broken and bob's 1:\n%s", r.stdout)
	}

	r = runBin(t, ws, nil, "", "team", "--json")
	saysBroken(t, r)
	var cfg struct {
		Teammates []struct {
			Name       string
			Unread     int
			InboxError *string `json:"inboxError"`
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &cfg); err != nil || len(cfg.Teammates) != 2 {
		t.Fatalf("team --json: %v %q", err, r.stdout)
	}
	for _, m := range cfg.Teammates {
		switch {
		case m.Name == "alice" && (m.InboxError == nil || !strings.Contains(*m.InboxError, "corrupt")):
			t.Errorf("alice's row has no inboxError naming the corruption: %s", r.stdout)
		case m.Name == "bob" && (m.InboxError != nil || m.Unread != 1):
			t.Errorf("bob's row, want 1 unread and no inboxError: %s", r.stdout)
		}
	}
}

func TestUsageErrorsExitTwo(t *testing.T) {
	ws := t.TempDir()
	for _, args := range [][]string{
		{"run"},
		{"send", "hello"},
		{"frobnicate"},
		{"team", "--no-such-flag"},
		{"inbox", "a", "b"},
	} {
		r := runBin(t, ws, nil, "", args...)
		if r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", args, r.code, r.stderr)
		}
		if !strings.HasPrefix(r.stderr, "agentteam: ") || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%v: want one sentence on stderr, got %q", args, r.stderr)
		}
	}
}

func TestVersion(t *testing.T) {
	r := runBin(t, t.TempDir(), nil, "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "agentteam ") || !strings.Contains(r.stdout, "go1.") {
		t.Fatalf("version: %q %q", r.stdout, r.stderr)
	}
}
