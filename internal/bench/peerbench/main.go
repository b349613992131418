//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

// Command peerbench measures agentteam's CPU per model turn side by side
// with a peer (the OpenAI Agents SDK for JavaScript). One fake
// OpenAI-compatible server (internal/llm/fakellm, no latency, loopback HTTP)
// runs in this process and answers both; each program runs as a child
// process and is measured by its rusage from wait4 (user+sys CPU, peak
// RSS), so the server's CPU counts for neither.
//
//	internal/bench/peerbench/run.sh -runs 5      # installs the peer, builds, runs
//	go build -o /tmp/agentteam . && go run ./internal/bench/peerbench -bin /tmp/agentteam -peer DIR -runs 3
//
// DIR holds peer.mjs and its node_modules. Each agent makes three model
// turns: two calls of a trivial tool (the peer's noop; agentteam's
// read_file of a 3-byte file), then the reply "done"; agentteam's lead
// spawns the teammates (50 spawn_teammate calls a turn) and answers their
// reports, and its turns count too. With -cpuprofile, more agentteam runs
// are made in a child of this program that runs agentteam's commands in
// process under pprof.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/cmd"
	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/bench/benchproc"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// The scenario: N agents of 3 model turns each, C at a time.
const batch = 50 // spawn_teammate calls per lead turn

// childFlag makes this program run agentteam in process (for profiling);
// launchFlag makes it run a command and report its rusage (see launch).
const (
	childFlag  = "-agentteam-child"
	launchFlag = "-launch"
)

func main() {
	if len(os.Args) > 2 && os.Args[1] == childFlag {
		os.Exit(child(os.Args[2], os.Args[3:]))
	}
	if len(os.Args) > 2 && os.Args[1] == launchFlag {
		os.Exit(benchproc.Launch("peerbench", os.Args[2:]))
	}
	bin := flag.String("bin", "", "the agentteam binary to measure")
	before := flag.String("before", "", "another agentteam binary (say, built before a change) run in the same loop")
	peerDir := flag.String("peer", "", "directory with peer.mjs and its node_modules (empty: agentteam only)")
	agents := flag.Int("agents", 200, "agents (teammates) per run")
	workers := flag.Int("workers", 10, "concurrency: agentteam's --max-workers, the peer's C")
	runs := flag.Int("runs", 3, "runs of each program, interleaved")
	tmp := flag.String("tmpdir", os.TempDir(), "where agentteam's workspaces are made")
	noStream := flag.Bool("no-stream", false, "run agentteam with --no-stream (the peer asks for whole replies)")
	wrap := flag.String("wrap", "", "a command line agentteam runs under (say, \"strace -c -f -o FILE\"); its figures are then the wrapper's")
	keep := flag.Bool("keep", false, "keep agentteam's workspaces (else removed when all runs are done, not between runs: a fresh deletion makes the next files dearer to create on ext4)")
	profile := flag.String("cpuprofile", "", "also profile agentteam runs in process and write the profiles to FILE.1, FILE.2…")
	profileRuns := flag.Int("profile-runs", 3, "agentteam runs profiled with -cpuprofile")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "peerbench: -bin is required")
		os.Exit(2)
	}
	b := &bench{agents: *agents, workers: *workers, tmp: *tmp, noStream: *noStream, wrap: strings.Fields(*wrap)}
	b.srv = fakellm.New(b.script, fakellm.WithDefaultAgent("peer"))
	defer b.srv.Close()
	defer func() {
		for _, d := range b.dirs {
			if *keep {
				fmt.Println("kept", d)
			} else {
				_ = os.RemoveAll(d)
			}
		}
	}()
	port := strings.TrimPrefix(strings.TrimSuffix(b.srv.URL(), "/v1"), "http://127.0.0.1:")

	floor, err := b.measure("floor", exec.Command("/bin/true"), os.TempDir())
	check(err)
	fmt.Printf("children are started by a small launcher; its peak RSS, the floor of every maxrss below: %.1f MB\n", float64(floor.maxRSSKB)/1024)
	var results []result
	for i := 0; i < *runs; i++ {
		if *before != "" {
			r, err := b.runAgentteam(*before, nil)
			check(err)
			r.name = "agentteam-before" + strings.TrimPrefix(r.name, "agentteam")
			results = append(results, r)
			r.print()
		}
		if *peerDir != "" {
			r, err := b.measure("peer", exec.Command("node", "peer.mjs", port, strconv.Itoa(*agents), strconv.Itoa(*workers)), *peerDir)
			check(err)
			results = append(results, r)
			r.print()
		}
		r, err := b.runAgentteam(*bin, nil)
		check(err)
		results = append(results, r)
		r.print()
	}
	if *profile != "" {
		self, err := os.Executable()
		check(err)
		for i := 1; i <= *profileRuns; i++ {
			r, err := b.runAgentteam(self, []string{childFlag, fmt.Sprintf("%s.%d", *profile, i)})
			check(err)
			r.name = "agentteam (in process, profiled)"
			r.print()
		}
	}
	summary(results)
	if v := b.srv.Violations(); len(v) > 0 {
		fmt.Fprintf(os.Stderr, "peerbench: the fake server saw %d protocol violations, first: %s\n", len(v), v[0])
		os.Exit(1)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		os.Exit(1)
	}
}

type bench struct {
	agents, workers int
	tmp             string
	noStream        bool
	wrap            []string
	dirs            []string
	srv             *fakellm.Server
	turns           atomic.Int64
}

// result is one child's whole-process figures.
type result struct {
	name            string
	turns           int64
	user, sys, wall time.Duration
	maxRSSKB        int64
	stdout          string
}

func (r result) cpu() time.Duration { return r.user + r.sys }

func (r result) perTurn() float64 { return float64(r.cpu().Microseconds()) / 1000 / float64(r.turns) }

func (r result) print() {
	fmt.Printf("%-34s turns %4d  cpu %7.1f ms (user %6.1f, sys %6.1f)  cpu/turn %6.3f ms  maxrss %6.1f MB  wall %5.2f s\n",
		r.name, r.turns, ms(r.cpu()), ms(r.user), ms(r.sys), r.perTurn(), float64(r.maxRSSKB)/1024, r.wall.Seconds())
	if strings.TrimSpace(r.stdout) != "" {
		fmt.Printf("  its output: %s\n", strings.TrimSpace(r.stdout))
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// measure runs c in dir to its end, through the launcher, and reads its rusage.
func (b *bench) measure(name string, c *exec.Cmd, dir string) (result, error) {
	var out, errb bytes.Buffer
	c.Dir, c.Stdout, c.Stderr = dir, &out, &errb
	b.turns.Store(0)
	u, err := benchproc.Measure(launchFlag, c)
	if err != nil {
		return result{}, fmt.Errorf("%s: %w", name, err)
	}
	return result{name: name, turns: b.turns.Load(), user: u.User, sys: u.Sys, wall: u.Wall, maxRSSKB: u.MaxRSSKB, stdout: out.String()}, nil
}

// runAgentteam runs `agentteam run` in a fresh workspace and checks the team's result.
func (b *bench) runAgentteam(bin string, pre []string) (result, error) {
	dir, err := os.MkdirTemp(b.tmp, "peerbench-")
	if err != nil {
		return result{}, err
	}
	b.dirs = append(b.dirs, dir)
	if err := os.WriteFile(filepath.Join(dir, "noop.txt"), []byte("ok\n"), 0o644); err != nil {
		return result{}, err
	}
	args := append(append([]string(nil), pre...), "--workspace", dir, "--base-url", b.srv.URL(), "--model", "fake-model",
		"--max-workers", strconv.Itoa(b.workers), "--max-queue", strconv.Itoa(b.agents+batch), "--quiet")
	if b.noStream {
		args = append(args, "--no-stream")
	}
	args = append(args, "run", "spawn the workers and collect their reports")
	if len(b.wrap) > 0 {
		args = append(append(b.wrap[1:], bin), args...)
		bin = b.wrap[0]
	}
	c := exec.Command(bin, args...)
	c.Env = append(os.Environ(), "OPENAI_API_KEY=k", "XDG_CONFIG_HOME="+dir)
	r, err := b.measure("agentteam", c, dir)
	if err != nil {
		return r, err
	}
	if got := strings.TrimSpace(r.stdout); got != "noted" {
		return r, fmt.Errorf("agentteam's final answer is %q, want \"noted\"", got)
	}
	r.stdout = ""
	if b.noStream {
		r.name = "agentteam --no-stream"
	}
	return r, nil
}

var agentTag = regexp.MustCompile(`\[\[agent:(w\d+)\]\]`)

// script answers both programs. The peer's agents are told apart by the
// tag in their instructions, agentteam's by the agent header.
func (b *bench) script(c fakellm.Call) fakellm.Reply {
	b.turns.Add(1)
	n := 0
	for _, m := range c.Req.Messages {
		if m.Role == openai.ChatMessageRoleAssistant {
			n++
		}
	}
	if c.Agent == "peer" {
		if len(c.Req.Messages) == 0 || !agentTag.MatchString(c.Req.Messages[0].Content) {
			return fakellm.Reply{Status: 400, Content: "peerbench: no [[agent:wNNN]] tag in the instructions"}
		}
		switch n {
		case 0, 1:
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "noop", Args: fmt.Sprintf(`{"x":%d}`, n+1)}}}
		}
		return fakellm.Reply{Content: "done"}
	}
	if c.Agent == inbox.LeadName {
		if n*batch >= b.agents {
			return fakellm.Reply{Content: "noted"}
		}
		var r fakellm.Reply
		for i := n * batch; i < min((n+1)*batch, b.agents); i++ {
			r.ToolCalls = append(r.ToolCalls, fakellm.ToolCall{Name: "spawn_teammate",
				Args: fmt.Sprintf(`{"name":"w%03d","role":"worker","prompt":"do your part"}`, i)})
		}
		return r
	}
	// A teammate: two trivial tool calls (reading a 3-byte file), then "done".
	switch n {
	case 0, 1:
		return fakellm.Reply{ToolCalls: []fakellm.ToolCall{{Name: "read_file", Args: `{"path":"noop.txt"}`}}}
	}
	return fakellm.Reply{Content: "done"}
}

// summary prints the medians of each program and the ratio of agentteam's
// CPU per turn to the peer's, run by run and of the medians.
func summary(rs []result) {
	by := map[string][]result{}
	var names []string
	for _, r := range rs {
		if _, ok := by[r.name]; !ok {
			names = append(names, r.name)
		}
		by[r.name] = append(by[r.name], r)
	}
	fmt.Println("medians [min to max]:")
	med := map[string]float64{}
	for _, n := range names {
		var per, rss, wall []float64
		for _, r := range by[n] {
			per, rss, wall = append(per, r.perTurn()), append(rss, float64(r.maxRSSKB)/1024), append(wall, r.wall.Seconds())
		}
		med[n] = median(per)
		fmt.Printf("  %-24s cpu/turn %.3f ms [%.3f to %.3f]  maxrss %.1f MB  wall %.2f s\n", n, med[n], minOf(per), maxOf(per), median(rss), median(wall))
	}
	peer := by["peer"]
	for _, n := range names {
		if n == "peer" || len(peer) == 0 {
			continue
		}
		var ratios []float64
		for i, r := range by[n] {
			if i < len(peer) {
				ratios = append(ratios, r.perTurn()/peer[i].perTurn())
			}
		}
		out, _ := json.Marshal(ratios)
		fmt.Printf("  %s / peer, cpu per turn: %.3f (medians); run by run %s\n", n, med[n]/med["peer"], out)
	}
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minOf(v []float64) float64 { s := append([]float64(nil), v...); sort.Float64s(s); return s[0] }
func maxOf(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)-1]
}

// child runs agentteam's commands in this process with a CPU profile.
func child(profile string, args []string) int {
	f, err := os.Create(profile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		return 1
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "peerbench:", err)
		return 1
	}
	defer pprof.StopCPUProfile()
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(300) // as agentteam's main does
	}
	root := cmd.NewRootCmd(cmd.IOStreams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, nil)
	root.SetArgs(args)
	if err := root.ExecuteContext(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "agentteam:", err)
		return 1
	}
	// What was allocated, beside the CPU profile (go tool pprof -sample_index=alloc_space).
	if m, err := os.Create(profile + ".allocs"); err == nil {
		_ = pprof.Lookup("allocs").WriteTo(m, 0)
		_ = m.Close()
	}
	return 0
}
