//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/fakellm"
	"github.com/agentteam/agentteam/workspace"
)

// spawnBatch is the spawn_teammate calls of one lead turn.
const spawnBatch = 50

// turnBench is scenario 3: `agentteam run` against one fake model server
// in this process; each run is measured from wait4 by a launcher process.
type turnBench struct {
	teamBin         string // the binary whose `team --json` checks each run's end
	agents, workers int
	srv             *fakellm.Server
	turns           atomic.Int64
}

// usage is what the launcher reports of its child.
type usage struct {
	User, Sys, Wall time.Duration
	MaxRSSKB        int64
}

func (u usage) cpu() time.Duration { return u.User + u.Sys }

// launch runs args[0] with args[1:] and writes its rusage (wait4) as JSON
// to descriptor 3. Children are started by this small process rather than
// the harness because Linux starts a child's ru_maxrss at the RSS of the
// process that forked it, and the harness's fake server keeps every
// request. SIGTERM is handed on to the child.
func launch(args []string) int {
	report := os.NewFile(3, "rusage")
	c := exec.Command(args[0], args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := c.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "storebench: launch:", err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			_ = c.Process.Signal(s)
		case <-done:
		}
	}()
	err := c.Wait()
	close(done)
	wall := time.Since(start)
	ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "storebench: launch: no rusage on this system")
		return 1
	}
	_ = json.NewEncoder(report).Encode(usage{User: time.Duration(ru.Utime.Nano()), Sys: time.Duration(ru.Stime.Nano()),
		Wall: wall, MaxRSSKB: ru.Maxrss})
	if err != nil {
		fmt.Fprintln(os.Stderr, "storebench: launch:", err)
		return 1
	}
	return 0
}

// turnResult is one `agentteam run`.
type turnResult struct {
	store     string
	turns     int64
	at        usage
	serverCPU time.Duration // 0 on the files; wait4, start-up and shutdown included
	serverRun time.Duration // the servers' CPU while agentteam ran (/proc, 10 ms ticks)
	load      float64       // 1-minute load average just before the run
	started   time.Time     // when the launcher was started
	streams   string        // JetStream: what the team's streams hold after the run
	check     error         // what checkTeam found wrong with the team's end, or nil
}

func (r turnResult) perTurn() float64 { return ms(r.at.cpu()) / float64(r.turns) }
func (r turnResult) serverPerTurn() float64 {
	return ms(r.serverCPU) / float64(r.turns)
}

// run runs `agentteam run` once in a fresh workspace under dir, on the
// files (storeURL "") or on storeURL, and checks the team's answer.
// bin with pre before agentteam's arguments is what runs (the binary, or
// this program's profiled child).
func (b *turnBench) run(bin string, pre []string, dir, storeURL string, serverCPU func() time.Duration) (turnResult, error) {
	ws, err := os.MkdirTemp(dir, "storebench-ws-")
	if err != nil {
		return turnResult{}, err
	}
	if err := os.WriteFile(filepath.Join(ws, "noop.txt"), []byte("ok\n"), 0o644); err != nil {
		return turnResult{}, err
	}
	args := []string{"--workspace", ws, "--base-url", b.srv.URL(), "--model", "fake-model",
		"--max-workers", strconv.Itoa(b.workers), "--max-queue", strconv.Itoa(b.agents + spawnBatch), "--quiet"}
	if storeURL != "" {
		args = append(args, "--store", storeURL)
	}
	args = append(args, "run", "spawn the workers and collect their reports")
	self, err := os.Executable()
	if err != nil {
		return turnResult{}, err
	}
	ruR, ruW, err := os.Pipe()
	if err != nil {
		return turnResult{}, err
	}
	defer ruR.Close()
	l := exec.Command(self, append(append([]string{launchFlag, bin}, pre...), args...)...)
	var out, errb bytes.Buffer
	l.Dir, l.Stdout, l.Stderr, l.ExtraFiles = ws, &out, &errb, []*os.File{ruW}
	l.Env = append(os.Environ(), "OPENAI_API_KEY=k", "XDG_CONFIG_HOME="+ws, "AGENTTEAM_STORE=")
	b.turns.Store(0)
	load := loadavg()
	s0 := serverCPU()
	started := time.Now()
	err = l.Start()
	_ = ruW.Close()
	if err != nil {
		return turnResult{}, err
	}
	var u usage
	decErr := json.NewDecoder(ruR).Decode(&u)
	srvRun := serverCPU() - s0
	if err := l.Wait(); err != nil {
		return turnResult{}, fmt.Errorf("agentteam run: %w\n%s", err, errb.String())
	}
	if decErr != nil {
		return turnResult{}, fmt.Errorf("no rusage from the launcher: %w", decErr)
	}
	if got := strings.TrimSpace(out.String()); got != "noted" {
		return turnResult{}, fmt.Errorf("agentteam's final answer is %q, want \"noted\"\n%s", got, errb.String())
	}
	// The check's failure is the caller's to judge (see turnResult.check).
	return turnResult{turns: b.turns.Load(), at: u, load: load, started: started, serverRun: srvRun, check: b.checkTeam(ws, storeURL)}, nil
}

// checkTeam reads `agentteam team --json` of the run's workspace and store:
// every teammate must have ended shutdown.
func (b *turnBench) checkTeam(ws, storeURL string) error {
	args := []string{"--workspace", ws}
	if storeURL != "" {
		args = append(args, "--store", storeURL)
	}
	c := exec.Command(b.teamBin, append(args, "team", "--json")...)
	c.Env = append(os.Environ(), "XDG_CONFIG_HOME="+ws, "AGENTTEAM_STORE=")
	out, err := c.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return fmt.Errorf("team --json: %w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return fmt.Errorf("team --json: %w", err)
	}
	var v struct {
		Teammates []struct{ Name, Status string } `json:"teammates"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return fmt.Errorf("team --json: %w", err)
	}
	by := map[string]int{}
	for _, m := range v.Teammates {
		by[m.Status]++
	}
	if len(v.Teammates) != b.agents || by["shutdown"] != b.agents {
		return fmt.Errorf("after the run %d teammates, by status %v; want %d, all shutdown", len(v.Teammates), by, b.agents)
	}
	return nil
}

// script: the lead spawns w000… in turns of 50 spawn_teammate calls, then
// answers every wake with "noted"; each teammate makes three turns: two
// read_file calls of a 3-byte file, then the reply "done".
func (b *turnBench) script(c fakellm.Call) fakellm.Reply {
	b.turns.Add(1)
	n := 0
	for _, m := range c.Req.Messages {
		if m.Role == openai.ChatMessageRoleAssistant {
			n++
		}
	}
	if c.Agent == workspace.LeadName {
		if n*spawnBatch >= b.agents {
			return fakellm.Reply{Content: "noted"}
		}
		var r fakellm.Reply
		for i := n * spawnBatch; i < min((n+1)*spawnBatch, b.agents); i++ {
			r.ToolCalls = append(r.ToolCalls, fakellm.ToolCall{Name: "spawn_teammate",
				Args: fmt.Sprintf(`{"name":"w%03d","role":"worker","prompt":"do your part"}`, i)})
		}
		return r
	}
	if n < 2 {
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "read_file", Args: `{"path":"noop.txt"}`}}}
	}
	return fakellm.Reply{Content: "done"}
}
