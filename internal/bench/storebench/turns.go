//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/bench/benchproc"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
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

// turnResult is one `agentteam run`.
type turnResult struct {
	store     string
	turns     int64
	at        benchproc.Usage
	serverCPU time.Duration // 0 on the files; wait4, start-up and shutdown included
	serverRun time.Duration // the servers' CPU while agentteam ran (/proc, 10 ms ticks)
	load      float64       // 1-minute load average just before the run
	started   time.Time     // when the launcher was started
	streams   string        // JetStream: what the team's streams hold after the run
	check     error         // what checkTeam found wrong with the team's end, or nil
}

func (r turnResult) perTurn() float64 { return ms(r.at.CPU()) / float64(r.turns) }
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
	c := exec.Command(bin, append(append([]string(nil), pre...), args...)...)
	var out, errb bytes.Buffer
	c.Dir, c.Stdout, c.Stderr = ws, &out, &errb
	c.Env = append(os.Environ(), "OPENAI_API_KEY=k", "XDG_CONFIG_HOME="+ws, "AGENTTEAM_STORE=")
	b.turns.Store(0)
	load := loadavg()
	s0 := serverCPU()
	started := time.Now()
	u, err := benchproc.Measure(launchFlag, c)
	srvRun := serverCPU() - s0
	if err != nil {
		return turnResult{}, fmt.Errorf("agentteam run: %w", err)
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
	if c.Agent == inbox.LeadName {
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
