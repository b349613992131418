package cmd

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/internal/store/natsstore"
	"github.com/agentteam/agentteam/internal/testutil/testkit"
	"github.com/agentteam/agentteam/team/registry"
)

// cutProxy is a TCP proxy to a NATS server that a test can cut (hold
// every byte either way, closing nothing: a partition, or a process
// stopped) and heal (deliver what it held, in order, late, then go on).
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	pipes []*pipe
	conns []net.Conn
	seen  bytes.Buffer // what the server said to the clients since the last heal
	wg    sync.WaitGroup
}

// pipe is one direction of one connection.
type pipe struct {
	p       *cutProxy
	dst     net.Conn
	down    bool // server to client
	mu      sync.Mutex
	held    bool
	pending []byte
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		up := &pipe{p: p, dst: s, held: p.cut}
		down := &pipe{p: p, dst: c, held: p.cut, down: true}
		p.pipes = append(p.pipes, up, down)
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go up.run(c)
		go down.run(s)
	}
}

// run copies src to the pipe's destination, holding what it reads while cut.
func (pp *pipe) run(src net.Conn) {
	defer pp.p.wg.Done()
	defer func() { _ = pp.dst.Close() }()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			pp.mu.Lock()
			if pp.held {
				pp.pending = append(pp.pending, buf[:n]...)
			} else {
				pp.write(buf[:n])
			}
			pp.mu.Unlock()
		}
		if err != nil {
			return
		}
	}
}

// write sends b on; the caller holds pp.mu.
func (pp *pipe) write(b []byte) {
	if pp.down {
		pp.p.mu.Lock()
		pp.p.seen.Write(b)
		pp.p.mu.Unlock()
	}
	_, _ = pp.dst.Write(b)
}

// cutOff holds every byte from now on, both ways, on every connection.
func (p *cutProxy) cutOff() {
	p.mu.Lock()
	p.cut = true
	pipes := append([]*pipe(nil), p.pipes...)
	p.mu.Unlock()
	for _, pp := range pipes {
		pp.mu.Lock()
		pp.held = true
		pp.mu.Unlock()
	}
}

// heal delivers what was held, late and in order, and forwards again.
func (p *cutProxy) heal() {
	p.mu.Lock()
	p.cut = false
	p.seen.Reset()
	pipes := append([]*pipe(nil), p.pipes...)
	p.mu.Unlock()
	for _, pp := range pipes {
		pp.mu.Lock()
		if len(pp.pending) > 0 {
			pp.write(pp.pending)
			pp.pending = nil
		}
		pp.held = false
		pp.mu.Unlock()
	}
}

// said reports whether the server said s to a client since the last heal.
func (p *cutProxy) said(s string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return bytes.Contains(p.seen.Bytes(), []byte(s))
}

// TestACutOffWorkerIsFencedAndItsLateWritesAreRefused: worker w1 reaches
// the NATS server through a proxy the test cuts while alice, on w1, waits
// for her model. Her model then answers on w1: w1 records it, but the
// write is held in the cut. w1 cannot renew its heartbeat and stops
// alice itself, before its heartbeat expires; the lead then respawns her
// on w2, which goes on from her conversation and finishes. When the cut
// heals, w1's held write of alice's conversation reaches the server late,
// and the server refuses it (wrong last sequence: w2 claimed the
// conversation). So alice's conversation has none of w1's late answer,
// the lead got her result once (w2's), each message to her is in her
// conversation once, and the registry shows her shut down on w2.
func TestACutOffWorkerIsFencedAndItsLateWritesAreRefused(t *testing.T) {
	nt := startNATSTeam(t, "fence")
	server := strings.TrimPrefix(strings.TrimSuffix(nt.url, "/"+nt.team), "nats://")
	proxy := startCutProxy(t, server)
	answer := make(chan struct{}) // closed once w1 is cut off: its alice's model answers
	var mu sync.Mutex
	aliceCalls := 0
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {
			{ToolCalls: []fakellm.ToolCall{call("spawn_teammate", `{"name":"alice","role":"programmer","prompt":"write the parser","labels":["one"]}`)}},
			{Content: "spawned alice"},
		},
	}, func(c fakellm.Call) fakellm.Reply {
		if c.Agent != "alice" {
			return fakellm.Reply{Content: "lead: noted"}
		}
		mu.Lock()
		aliceCalls++
		n := aliceCalls
		mu.Unlock()
		if n == 1 { // on w1
			select {
			case <-answer:
			case <-time.After(2 * time.Minute):
			}
			return fakellm.Reply{Content: "LATE ANSWER FROM W1"}
		}
		return fakellm.Reply{Content: "alice: parser written"}
	}), fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	defer func() {
		select {
		case <-answer:
		default:
			close(answer)
		}
	}()
	env := fakeEnv(srv)
	viaProxy := nt
	viaProxy.url = "nats://" + proxy.addr() + "/" + nt.team
	_, waitW1, w1 := startWorker(t, viaProxy, env, "w1", "--labels", "one")
	waitLead, _ := startBinPID(t, t.TempDir(), env, "run", "--store", nt.url, "write a parser")
	defer func() {
		if t.Failed() {
			dumpEvents(t, nt)
		}
	}()
	reg := nt.registry(t)
	alice := func() registry.Member {
		c, err := reg.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if i := c.Find("alice"); i >= 0 {
			return c.Teammates[i]
		}
		return registry.Member{}
	}
	testkit.EventuallyF(t, time.Minute, "alice working on w1", func() bool {
		m := alice()
		return m.Status == registry.StatusWorking && m.Worker == "w1" && len(srv.Requests("alice")) > 0
	}, func() string { return fmt.Sprintf("alice is %+v", alice()) })
	proxy.cutOff()
	close(answer)
	// w2 starts after the cut: only it can take the respawn.
	startWorker(t, nt, env, "w2", "--labels", "one")
	r := waitLead()
	mustSucceed(t, r, "run")
	if m := alice(); m.Worker != "w2" || m.Status != registry.StatusShutdown {
		t.Fatalf("alice after the run: %s on %q, want shutdown on w2", m.Status, m.Worker)
	}
	// The cut heals: w1's held writes reach the server, which refuses the
	// one of alice's conversation; w1 then takes its heartbeat again.
	proxy.heal()
	beats, err := natsstore.OpenWorkers(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Fatal(err)
	}
	back := false
	testkit.EventuallyF(t, time.Minute, "w1 back and a late write refused after the heal", func() bool {
		alive, err := beats.Alive(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		_, back = alive["w1"]
		return back && proxy.said("wrong last sequence")
	}, func() string {
		return fmt.Sprintf("w1 back %v, a late write refused %v", back, proxy.said("wrong last sequence"))
	})
	if err := syscall.Kill(w1(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	w1r := waitW1()
	if !strings.Contains(w1r.stderr, "lost its heartbeat") {
		t.Errorf("w1 never said it stopped alice for its lost heartbeat:\n%s", w1r.stderr)
	}
	sessions, err := natsstore.OpenSessions(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := sessions.Log("alice").Lines(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	conv := string(bytes.Join(lines, []byte("\n")))
	if strings.Contains(conv, "LATE ANSWER FROM W1") {
		t.Errorf("w1's late answer is in alice's conversation:\n%s", conv)
	}
	if !strings.Contains(conv, "parser written") {
		t.Errorf("w2's answer is not in alice's conversation:\n%s", conv)
	}
	mb, err := natsstore.OpenMailbox(context.Background(), nt.nc, nt.team)
	if err != nil {
		t.Fatal(err)
	}
	msgs, _, err := mb.ReadAll(t.Context(), "lead")
	if err != nil {
		t.Fatal(err)
	}
	// From alice, the lead has the news of her respawn, w2's result and
	// her answer to the run's shutdown: nothing from w1, early or late.
	var results, respawned int
	for _, msg := range msgs {
		if msg.From != "alice" {
			continue
		}
		switch {
		case msg.Type == "result" && strings.Contains(msg.Content, "parser written"):
			results++
		case msg.Type == "error" && strings.Contains(msg.Content, "respawned"):
			respawned++
		case msg.Type == "shutdown_response":
		default:
			t.Errorf("the lead got from alice a %s message that is not the respawn's: %q", msg.Type, msg.Content)
		}
	}
	if results != 1 || respawned != 1 {
		t.Errorf("the lead got %d results from alice and %d news of her respawn, want 1 and 1", results, respawned)
	}
	if m := alice(); m.Worker != "w2" || m.Status != registry.StatusShutdown {
		t.Errorf("alice after w1 came back: %s on %q, want shutdown on w2", m.Status, m.Worker)
	}
	assertEachOnceOnNATS(t, nt, "", "alice")
}
