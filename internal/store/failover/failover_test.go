package failover

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsserver"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/team/registry"
)

const (
	// defaultTeammates is how many teammates the test runs in CI. Issue 10
	// asks for 300 × 3 turns; on the 2-core CI machine with -race (the
	// three nodes run in this test's process, instrumented, and six
	// agentteam processes beside them) 300 teammates made 300 teammate
	// turns in 134 s under load 9 to 17, about 2.2 turns a second: the
	// whole run would take 8 minutes against a budget of 3. With 60
	// teammates every phase is still there (a backlog of spawns beyond
	// the workers' places, a worker killed mid-turn, a node lost mid-run,
	// the shutdown of all) and the test took 140 to 185 s in four runs on
	// that machine beside cmd's tests (about 200 teammate turns, 330
	// messages checked). AGENTTEAM_FAILOVER_TEAMMATES=300 runs the
	// issue's figure.
	defaultTeammates = 60
	// spawnBatch is the spawn_teammate calls of one lead turn.
	spawnBatch = 50
	// slots is each worker's --max-workers: model turns at once. Fewer
	// places than teammates leave spawns waiting on the queue.
	slots = 5
	// placement is the lead's --placement-timeout: shorter than the wait
	// of the last spawns for a free place, which must not fail them.
	placement = "5s"
	// turnDelay is the fake model's latency for a teammate's turn, so
	// that each worker has teammates mid-turn when it is killed.
	turnDelay = 20 * time.Millisecond
	// teamName is the team's name on the cluster.
	teamName = "failover"
	// label is what the workers offer and every spawn asks for: the
	// teammates run on the three workers, not in the lead's process.
	label = "pool"
)

// cluster is three nodes of one JetStream cluster on 127.0.0.1.
type cluster struct {
	nodes []*natsserver.Server
	names []string
	hosts []string // each node's client HOST:PORT
}

// startCluster starts three nodes, each routed to all three, and waits
// for a JetStream leader. The cluster ports are picked free first; if
// another program takes one meanwhile, the start is tried again.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	var c *cluster
	var err error
	for range 3 {
		if c, err = tryCluster(t); err == nil || !strings.Contains(err.Error(), "is taken") {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, s := range c.nodes {
			s.Shutdown()
		}
	})
	js, err := jetstream.New(connect(t, c.url()))
	if err != nil {
		t.Fatal(err)
	}
	var last error
	testkit.EventuallyF(t, time.Minute, "the cluster's JetStream leader", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		info, err := js.AccountInfo(ctx)
		last = err
		return err == nil && info != nil
	}, func() string { return fmt.Sprint(last) })
	return c
}

func tryCluster(t *testing.T) (*cluster, error) {
	var routes, addrs []string
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, l.Addr().String())
		routes = append(routes, "nats://"+l.Addr().String())
		l.Close()
	}
	c := &cluster{}
	for i := range 3 {
		name := fmt.Sprintf("n%d", i+1)
		s, err := natsserver.Start(natsserver.ServerOptions{
			Listen: "127.0.0.1:0", DataDir: t.TempDir(), ServerName: name,
			Cluster: addrs[i], ClusterName: "failover", Routes: routes,
		})
		if err != nil {
			for _, s := range c.nodes {
				s.Shutdown()
			}
			return nil, err
		}
		c.nodes, c.names = append(c.nodes, s), append(c.names, name)
		c.hosts = append(c.hosts, strings.TrimPrefix(s.ClientURL(), "nats://"))
	}
	return c, nil
}

// url is every node's client URL, as nats.Connect takes them.
func (c *cluster) url() string { return "nats://" + strings.Join(c.hosts, ",nats://") }

// store is the team's --store: all three nodes, the team, three copies.
func (c *cluster) store() string {
	return "nats://" + strings.Join(c.hosts, ",") + "/" + teamName + "?replicas=3"
}

func (c *cluster) node(name string) *natsserver.Server {
	for i, n := range c.names {
		if n == name {
			return c.nodes[i]
		}
	}
	return nil
}

func connect(t *testing.T, url string) *nats.Conn {
	t.Helper()
	nc, err := natsconn.Connect(context.Background(), url, natsconn.ConnectOptions{DialTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// teammates is how many teammates the test runs: defaultTeammates,
// or an even AGENTTEAM_FAILOVER_TEAMMATES.
var teammates = func() int {
	if n, err := strconv.Atoi(os.Getenv("AGENTTEAM_FAILOVER_TEAMMATES")); err == nil && n >= 2 && n%2 == 0 {
		return n
	}
	return defaultTeammates
}()

// within bounds every process and wait of the test: generous, for a
// loaded 2-core machine with -race, and longer for more teammates.
var within = time.Duration(max(1, teammates/defaultTeammates)) * 8 * time.Minute

// name is teammate i's name; partner is who it greets (and is greeted by).
func name(i int) string { return fmt.Sprintf("t%03d", i) }
func partner(i int) int { return i ^ 1 }

func hello(from, to string) string { return "hello from " + from + " to " + to }

// script: the lead spawns t000… in turns of spawnBatch, each asking for
// the workers' label, then answers every wake with "noted". A teammate's
// three turns: it greets its partner (send_message), reads a file, and
// reports "done"; woken again by its partner's greeting, it reports again.
// A call its worker's death interrupted it makes again.
func script(teammateCalls *atomic.Int64) fakellm.Script {
	return func(c fakellm.Call) fakellm.Reply {
		n := 0
		for _, m := range c.Req.Messages {
			if m.Role == openai.ChatMessageRoleAssistant {
				n++
			}
		}
		if c.Agent == "lead" {
			// Each teammate is spawned once: a spawn answered with an
			// error (a registry write unanswered while a node went down)
			// is the store's fault, and the test fails on it (spawnErrors).
			spawned := spawns(c.Req.Messages)
			var r fakellm.Reply
			for i := range teammates {
				if len(r.ToolCalls) == spawnBatch {
					break
				}
				if _, tried := spawned[name(i)]; tried {
					continue
				}
				r.ToolCalls = append(r.ToolCalls, fakellm.ToolCall{Name: "spawn_teammate",
					Args: fmt.Sprintf(`{"name":%q,"role":"worker","prompt":"greet %s, then report","labels":[%q]}`, name(i), name(partner(i)), label)})
			}
			if len(r.ToolCalls) == 0 {
				return fakellm.Reply{Content: "noted"}
			}
			return r
		}
		teammateCalls.Add(1)
		r := fakellm.Reply{Delay: turnDelay}
		i, err := strconv.Atoi(strings.TrimPrefix(c.Agent, "t"))
		switch {
		case err != nil:
			r.Content = "who am I?"
		case !done(c.Req.Messages, "send_message"):
			// As a model would: a greeting whose call was interrupted
			// (its worker killed before it was sent) is sent again.
			r.ToolCalls = []fakellm.ToolCall{{Name: "send_message",
				Args: fmt.Sprintf(`{"to":%q,"content":%q}`, name(partner(i)), hello(c.Agent, name(partner(i))))}}
		case !done(c.Req.Messages, "read_file"):
			r.ToolCalls = []fakellm.ToolCall{{Name: "read_file", Args: `{"path":"noop.txt"}`}}
		default:
			r.Content = c.Agent + ": done"
		}
		return r
	}
}

// spawns are the teammates the lead's conversation spawned, by the id
// of their spawn_teammate call.
func spawns(msgs []openai.ChatCompletionMessage) map[string]string {
	spawned := map[string]string{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			var args struct{ Name string }
			if tc.Function.Name == "spawn_teammate" && json.Unmarshal([]byte(tc.Function.Arguments), &args) == nil {
				spawned[args.Name] = tc.ID
			}
		}
	}
	return spawned
}

// spawnErrors are the spawns the lead's conversation had answered with
// an error, each as "NAME: the answer".
func spawnErrors(msgs []openai.ChatCompletionMessage) []string {
	byID := map[string]string{}
	for name, id := range spawns(msgs) {
		byID[id] = name
	}
	var errs []string
	for _, m := range msgs {
		if who, ok := byID[m.ToolCallID]; ok && m.Role == openai.ChatMessageRoleTool && strings.HasPrefix(m.Content, "error") {
			errs = append(errs, who+": "+m.Content)
		}
	}
	return errs
}

// done reports whether the conversation has a call of tool answered
// without an error (one cut off by a crash is answered as interrupted).
func done(msgs []openai.ChatCompletionMessage, tool string) bool {
	calls := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.Function.Name == tool {
				calls[tc.ID] = true
			}
		}
		if m.Role == openai.ChatMessageRoleTool && calls[m.ToolCallID] && !strings.HasPrefix(m.Content, "error") {
			return true
		}
	}
	return false
}

// TestClusterFailover is the failover proof: an embedded 3-node JetStream
// cluster, the lead's `agentteam run` and three `agentteam worker`
// processes, all given the three nodes' URLs and ?replicas=3. The
// teammates (see defaultTeammates) each greet a partner and make three
// model turns, more than the workers have places for at once. Mid-run one
// worker is killed with SIGKILL (its teammates are respawned on the
// others from their conversations in the store) and the node leading the
// team's inbox stream is stopped. Then, from the stores: every message in
// every inbox (the sender's side: the mailbox stream) is in its
// recipient's conversation exactly once, every greeting is there, and
// every teammate ends shutdown.
func TestClusterFailover(t *testing.T) {
	testkit.SkipShort(t)
	begin := time.Now()
	c := startCluster(t)
	nc := connect(t, c.url())
	var teammateCalls atomic.Int64
	srv := fakellm.New(script(&teammateCalls), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	env := []string{"OPENAI_API_KEY=test-key", "OPENAI_BASE_URL=" + srv.URL(), "AGENTTEAM_MODEL=fake-model"}
	queue := strconv.Itoa(teammates + spawnBatch)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	beats, err := natsstore.OpenWorkers(ctx, nc, teamName, natsstore.Replicas(3))
	if err != nil {
		t.Fatal(err)
	}
	workers := map[string]*proc{}
	for _, id := range []string{"w1", "w2", "w3"} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "noop.txt"), []byte("ok\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		workers[id] = start(t, within, dir, env, "worker", "--store", c.store(), "--id", id, "--workspace", dir,
			"--labels", label, "--max-workers", strconv.Itoa(slots), "--max-queue", queue)
	}
	waitFor(t, "the three workers' heartbeats", func() bool {
		alive, err := beats.Alive(ctx)
		return err == nil && len(alive) == 3
	}, workers)
	lead := t.TempDir()
	run := start(t, within, lead, env, "run", "--store", c.store(), "--max-workers", strconv.Itoa(slots),
		"--max-queue", queue, "--placement-timeout", placement, "greet in pairs and report")
	defer func() {
		if t.Failed() {
			t.Logf("the lead's failed calls and errors:\n%s", failures(run.stderr(), 40))
			t.Logf("the lead's stderr:\n%s", tail(run.stderr(), 4000))
			for id, w := range workers {
				t.Logf("worker %s's stderr:\n%s", id, tail(w.stderr(), 2000))
			}
			// AGENTTEAM_FAILOVER_LOGS=DIR keeps every process's whole stderr.
			if dir := os.Getenv("AGENTTEAM_FAILOVER_LOGS"); dir != "" {
				for who, p := range map[string]*proc{"lead": run, "w1": workers["w1"], "w2": workers["w2"], "w3": workers["w3"]} {
					if err := os.WriteFile(filepath.Join(dir, who+".stderr"), []byte(p.stderr()), 0o644); err != nil {
						t.Log(err)
					}
				}
			}
		}
	}()
	reg := openRegistry(ctx, t, nc)
	everyone := map[string]*proc{"the lead": run}
	for id, w := range workers {
		everyone["worker "+id] = w
	}

	// Mid-run, 1: w2 is killed while teammates of its own work.
	const victim = "w2"
	var onVictim []string
	waitFor(t, "a third of the teammates' turns with w2 running some", func() bool {
		if teammateCalls.Load() < int64(teammates) {
			return false
		}
		cfg, err := reg.Read(t.Context())
		if err != nil {
			return false
		}
		onVictim = onVictim[:0]
		working := 0
		for _, m := range cfg.Teammates {
			if m.Worker == victim && (m.Status == registry.StatusWorking || m.Status == registry.StatusIdle || m.Status == registry.StatusQueued) {
				onVictim = append(onVictim, m.Name)
				if m.Status == registry.StatusWorking {
					working++
				}
			}
		}
		return working > 0
	}, everyone)
	atKill := teammateCalls.Load()
	if err := syscall.Kill(workers[victim].cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	delete(everyone, "worker "+victim)
	t.Logf("%.1fs: killed %s after %d teammate turns; it ran %d live teammates", time.Since(begin).Seconds(), victim, atKill, len(onVictim))

	// Mid-run, 2: the node leading the team's inbox stream is stopped.
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var leader string
	waitFor(t, "more teammates' turns after the kill", func() bool {
		if teammateCalls.Load() < atKill+int64(teammates/2) {
			return false
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		st, err := js.Stream(ctx, natsstore.StreamName(teamName))
		if err != nil {
			return false
		}
		info, err := st.Info(ctx)
		if err != nil || info.Cluster == nil || info.Cluster.Leader == "" || c.node(info.Cluster.Leader) == nil {
			return false
		}
		leader = info.Cluster.Leader
		return true
	}, everyone)
	atStop := teammateCalls.Load()
	c.node(leader).Shutdown()
	t.Logf("%.1fs: stopped node %s, the inbox stream's leader, after %d teammate turns", time.Since(begin).Seconds(), leader, atStop)

	out := run.wait(t)
	t.Logf("%.1fs: the run ended after %d teammate turns", time.Since(begin).Seconds(), teammateCalls.Load())
	if strings.TrimSpace(out) != "noted" {
		t.Fatalf("the lead's answer: %q", out)
	}
	if v := srv.Violations(); len(v) > 0 {
		t.Fatalf("the model server saw protocol violations: %v", v)
	}
	if teammateCalls.Load() <= atStop {
		t.Fatalf("no teammate turn after the node stopped: the run was over already")
	}
	seen := map[string]bool{}
	for _, req := range srv.Requests("lead") {
		for _, e := range spawnErrors(req.Messages) {
			if !seen[e] {
				seen[e] = true
				t.Errorf("a spawn failed: %s", e)
			}
		}
	}
	// The workers left end cleanly on SIGTERM.
	for _, id := range []string{"w1", "w3"} {
		if err := workers[id].cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		workers[id].wait(t)
	}

	// From the stores, through a connection of the test's own.
	check := connect(t, c.url())
	ctx, cancel = context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cfg, err := openRegistry(ctx, t, check).Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]registry.Member{}
	for _, m := range cfg.Teammates {
		byName[m.Name] = m
	}
	if len(cfg.Teammates) != teammates {
		t.Errorf("the registry has %d teammates, want %d", len(cfg.Teammates), teammates)
	}
	for i := range teammates {
		m, ok := byName[name(i)]
		switch {
		case !ok:
			t.Errorf("%s is not in the registry", name(i))
		case m.Status != registry.StatusShutdown:
			t.Errorf("%s ended %s on %s (%s), want shutdown", m.Name, m.Status, m.Worker, m.Error)
		case m.Worker == victim:
			t.Errorf("%s ended on %s, the killed worker", m.Name, victim)
		}
	}
	events, err := natsstore.OpenEventLog(ctx, check, teamName)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := events.Lines(ctx)
	if err != nil {
		t.Fatal(err)
	}
	respawned := map[string]bool{}
	for _, l := range lines {
		var e event.Event
		if json.Unmarshal(l, &e) != nil {
			continue
		}
		if sc, ok := e.Payload.(event.StatusChanged); ok && sc.Status == registry.StatusFailed && strings.Contains(sc.Reason, "its worker "+victim) {
			respawned[e.Agent] = true
		}
	}
	for _, n := range onVictim {
		if !respawned[n] {
			t.Errorf("%s, live on %s when it was killed, was not failed and respawned", n, victim)
		}
	}

	mb, err := natsstore.OpenMailbox(ctx, check, teamName)
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := natsstore.OpenSessions(ctx, check, teamName)
	if err != nil {
		t.Fatal(err)
	}
	leadSession, err := os.ReadFile(filepath.Join(lead, ".agentteam", "sessions", "lead.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i := -1; i < teammates; i++ {
		who, conv := "lead", leadSession
		if i >= 0 {
			who = name(i)
			lines, err := sessions.Log(who).Lines(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			conv = bytes.Join(lines, []byte("\n"))
		}
		msgs, bad, err := mb.ReadAll(ctx, who)
		if err != nil {
			t.Fatal(err)
		}
		if len(bad) > 0 {
			t.Errorf("%s's inbox has %d bad lines", who, len(bad))
		}
		greeted := 0
		for _, m := range msgs {
			total++
			if n := bytes.Count(conv, []byte(`id=\"`+m.ID+`\"`)); n != 1 {
				t.Errorf("%s's message %s (%s from %s: %q) is in its conversation %d times, want once", who, m.ID, m.Type, m.From, event.FirstLine(m.Content, 60), n)
			}
			if i >= 0 && m.From == name(partner(i)) && m.Content == hello(m.From, who) {
				greeted++
			}
		}
		if i >= 0 && greeted != 1 {
			t.Errorf("%s's inbox has its partner's greeting %d times, want once", who, greeted)
		}
		// Every message is in the conversation once (above); the read
		// position may still lag behind one a commit found held by the
		// lost node's unfinished commit (inbox.ErrHeld) if the agent did
		// not read again after its hold ran out: said, not a failure.
		if st, err := mb.Stats(ctx, who); err != nil {
			t.Errorf("%s's inbox: %v", who, err)
		} else if st.Unread != 0 {
			t.Logf("%s's read position is %d behind its conversation (a held commit)", who, st.Unread)
		}
	}
	t.Logf("%.1fs: %d messages checked, each once in its conversation; %d teammates respawned from %s", time.Since(begin).Seconds(), total, len(respawned), victim)
}

// waitFor polls cond until it holds, failing the test after within or as
// soon as one of procs ends (what it waits for cannot come then).
func waitFor(t *testing.T, what string, cond func() bool, procs map[string]*proc) {
	t.Helper()
	testkit.Eventually(t, within, what, func() bool {
		if cond() {
			return true
		}
		for who, p := range procs {
			if p.exited() {
				t.Fatalf("waiting for %s: %s ended (%v):\n%s", what, who, p.err, tail(p.stderr(), 4000))
			}
		}
		return false
	})
}

// tail is the last n bytes of s.
// failures are the first n lines of a process's stderr that say a tool
// call failed or an error: what the tail, all shutdowns, leaves out.
func failures(s string, n int) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "✗") || strings.Contains(l, "error") || strings.Contains(l, "failed") {
			out = append(out, l)
			if len(out) == n {
				break
			}
		}
	}
	return strings.Join(out, "\n")
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// openRegistry is the team's registry as a process opens it (an entry per
// teammate, team/registry/entries.go), on nc.
func openRegistry(ctx context.Context, t *testing.T, nc *nats.Conn) *registry.Registry {
	t.Helper()
	entries, err := natsstore.OpenEntries(ctx, nc, teamName, "registry", registry.DecodeRegistryEntry, natsstore.Replicas(3))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(entries.Close)
	registry, err := registry.NewRegistryOnEntries(t.Context(), entries, teamName, nil)
	if err != nil {
		t.Fatal(err)
	}
	return registry
}
