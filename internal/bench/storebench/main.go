//go:build linux

// Command storebench measures the stores side by side in one
// run: the files (the default store) on the directories given (say /tmp,
// ext4, and /dev/shm, tmpfs) and NATS JetStream, a single `agentteam serve`
// (replicas 1) and a cluster of three `agentteam serve` processes on
// 127.0.0.1 (replicas 3). It is not part of agentteam.
//
//  1. append: messages/s appended by N goroutines of one process (to one
//     inbox, or each to its own), and the CPU per message of that process
//     and of the server.
//
//  2. wake: one process appends (as `agentteam send` does, through the
//     store's Append), another waits on the inbox as a teammate does
//     (Watch, then ReadUnread and Commit); this program re-executes itself
//     as the receiver, and the send time travels in the message.
//
//  3. turns: `agentteam run` with N teammates × 3 model turns against
//     internal/llm/fakellm (no latency) in this process, on the files and with
//     --store nats://…; whole-process CPU from wait4 of agentteam and of
//     the server processes (each run gets a fresh server), per model turn.
//     Each run must end with every teammate shutdown (`team --json`).
//
// Run it from the repository root:
//
//	internal/bench/storebench/run.sh                   # builds agentteam and this program, runs all three
//	go run ./internal/bench/storebench -bin /tmp/agentteam -loops 3
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentteam/agentteam/internal/bench/benchproc"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

const (
	launchFlag  = "-launch"
	appendFlag  = "-append"
	receiveFlag = "-receive"
)

func main() {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case launchFlag:
			os.Exit(benchproc.Launch("storebench", os.Args[2:]))
		case appendFlag:
			os.Exit(appendChild(os.Args[2:]))
		case receiveFlag:
			os.Exit(receiveChild())
		case profiledFlag:
			if len(os.Args) > 2 {
				os.Exit(profiled(os.Args[2], os.Args[3:]))
			}
		}
	}
	bin := flag.String("bin", "", "the agentteam binary (its serve runs the JetStream servers; its run is scenario 3)")
	files := flag.String("files", "/tmp,/dev/shm", "directories the files store is measured on, comma-separated")
	natsDir := flag.String("nats-dir", os.TempDir(), "where JetStream keeps its data (and scenario 3's workspaces on JetStream)")
	r3 := flag.Bool("r3", true, "also measure a 3-node cluster with replicas 3")
	scen := flag.String("scenarios", "append,wake,commit,turns", "which to run, comma-separated (also: consumers, the cost of creating -agents durable consumers; workers, -agents teammates on 1 → 3 worker processes, needs a binary with agentteam worker)")
	rounds := flag.Int("commit-rounds", 2000, "rounds of the commit check, per store")
	appendN := flag.String("append-n", "1,8,64", "concurrent appenders, comma-separated")
	appendSecs := flag.Float64("append-secs", 1, "seconds each append measurement lasts")
	shapes := flag.String("append-shapes", "one,own", "one: every appender to one inbox; own: each to its own")
	sends := flag.Int("sends", 1000, "messages sent in the wake measurement, per store")
	pace := flag.Duration("pace", 5*time.Millisecond, "time between two sends")
	loops := flag.Int("loops", 3, "scenario 3: loops, each running every store once")
	agents := flag.Int("agents", 200, "scenario 3: teammates per run")
	workers := flag.Int("workers", 10, "scenario 3: --max-workers")
	workerCounts := flag.String("worker-counts", "1,3", "workers: how many worker processes (the lead's run counts as one), compared by wall time")
	modelDelay := flag.Duration("model-delay", 200*time.Millisecond, "workers: the fake model's latency per turn")
	keep := flag.Bool("keep", false, "keep the workspaces and data directories")
	countAPI := flag.Bool("count-calls", false, "workers: count the messages through the server by kind (API requests, acks, publishes, replies) per model turn; the counting client loads the server, so that run's times are not comparable")
	profile := flag.String("cpuprofile", "", "scenario 3: after the loops, one more run per store with agentteam and each server node in a child of this program under pprof, profiles written to PREFIX.STORE.agentteam and PREFIX.STORE.nodeN")
	flag.Parse()
	if *bin == "" {
		fmt.Fprintln(os.Stderr, "storebench: -bin is required")
		os.Exit(2)
	}
	abs, err := filepath.Abs(*bin)
	check(err)
	h := &harness{bin: abs, natsDir: *natsDir, r3: *r3, profile: *profile, countCalls: *countAPI}
	for _, d := range strings.Split(*files, ",") {
		if d = strings.TrimSpace(d); d != "" {
			h.fileDirs = append(h.fileDirs, d)
		}
	}
	cleanup = func() {
		for _, d := range h.dirs {
			if *keep {
				fmt.Println("kept", d)
			} else {
				_ = os.RemoveAll(d)
			}
		}
	}
	defer cleanup()
	h.header()
	for _, s := range strings.Split(*scen, ",") {
		switch strings.TrimSpace(s) {
		case "append":
			var ns []int
			for _, v := range strings.Split(*appendN, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				check(err)
				ns = append(ns, n)
			}
			check(h.appendScenario(ns, strings.Split(*shapes, ","), *appendSecs))
		case "wake":
			check(h.wakeScenario(*sends, *pace))
		case "workers":
			var ns []int
			for _, v := range strings.Split(*workerCounts, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				check(err)
				ns = append(ns, n)
			}
			check(h.workerScenario(ns, *agents, *workers, *modelDelay, *loops))
		case "consumers":
			check(h.consumerScenario(*agents))
		case "commit":
			check(h.commitScenario(*rounds))
		case "turns":
			check(h.turnScenario(*loops, *agents, *workers))
		default:
			check(fmt.Errorf("unknown scenario %q", s))
		}
	}
}

// cleanup removes the directories made so far; check runs it before
// exiting, since os.Exit skips main's deferred call.
var cleanup = func() {}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "storebench:", err)
		cleanup()
		os.Exit(1)
	}
}

type harness struct {
	bin      string
	fileDirs []string
	natsDir  string
	r3       bool
	profile  string
	// countCalls: the workers scenario counts the server's messages by kind.
	countCalls bool
	dirs       []string // to remove at the end (not between runs: a fresh deletion makes ext4's next files dearer)
	seq        int
}

func (h *harness) tempDir(in, prefix string) (string, error) {
	d, err := os.MkdirTemp(in, prefix)
	if err == nil {
		h.dirs = append(h.dirs, d)
	}
	return d, err
}

// team names a fresh team (streams of its own) on a server.
func (h *harness) team(prefix string) string {
	h.seq++
	return fmt.Sprintf("%s%d", prefix, h.seq)
}

func (h *harness) header() {
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	fmt.Printf("storebench at %s UTC; kernel %s; %s\n", time.Now().UTC().Format("2006-01-02 15:04"),
		strings.TrimSpace(string(kernel)), cpus())
	for _, d := range append(append([]string(nil), h.fileDirs...), h.natsDir) {
		fmt.Printf("  %s is %s\n", d, fsType(d))
	}
}

// stores is every store measured, in the order they alternate; nats
// servers are started by the caller (start) per kind.
type natsKind struct {
	name     string
	replicas int
}

func (h *harness) natsKinds() []natsKind {
	k := []natsKind{{"JetStream R1", 1}}
	if h.r3 {
		k = append(k, natsKind{"JetStream R3 (3 nodes)", 3})
	}
	return k
}

// startServers starts one server of each kind; the caller stops them.
func (h *harness) startServers() ([]*natsServer, error) {
	var out []*natsServer
	for _, k := range h.natsKinds() {
		root, err := h.tempDir(h.natsDir, "storebench-nats-")
		if err != nil {
			return out, err
		}
		s, err := startNATS(h.bin, nil, k.replicas, root)
		if err != nil {
			return out, fmt.Errorf("%s: %w", k.name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func stopAll(ss []*natsServer) {
	for _, s := range ss {
		if _, err := s.stop(); err != nil {
			fmt.Fprintln(os.Stderr, "storebench:", err)
		}
	}
}

// confs are the stores of scenarios 1 and 2 for one measurement: a fresh
// inbox directory per files store, a fresh team per server.
func (h *harness) confs(servers []*natsServer) ([]storeConf, error) {
	var out []storeConf
	for _, d := range h.fileDirs {
		dir, err := h.tempDir(d, "storebench-inbox-")
		if err != nil {
			return nil, err
		}
		out = append(out, storeConf{name: "files " + d, dir: dir})
	}
	for i, s := range servers {
		out = append(out, storeConf{name: h.natsKinds()[i].name, urls: s.urls, team: h.team("b"), replicas: s.replicas})
	}
	return out, nil
}

func serverOf(c storeConf, servers []*natsServer) *natsServer {
	for _, s := range servers {
		if s.urls == c.urls && c.urls != "" {
			return s
		}
	}
	return nil
}

func (h *harness) turnScenario(loops, agents, workers int) error {
	b := &turnBench{teamBin: h.bin, agents: agents, workers: workers}
	b.srv = fakellm.New(b.script)
	defer b.srv.Close()
	fmt.Printf("\n## 3. CPU per model turn: agentteam run, %d teammates × 3 turns, %d workers, fakellm without latency\n", agents, workers)
	fmt.Println("(each JetStream run has fresh servers; their CPU is from wait4, start-up and shutdown included)")
	// What a server costs to start and stop with no work, to read the figures by.
	for _, k := range h.natsKinds() {
		root, err := h.tempDir(h.natsDir, "storebench-nats-")
		if err != nil {
			return err
		}
		s, err := startNATS(h.bin, nil, k.replicas, root)
		if err != nil {
			return err
		}
		c0 := s.cpu()
		time.Sleep(2 * time.Second)
		idle := s.cpu() - c0
		cpu, err := s.stop()
		if err != nil {
			return err
		}
		fmt.Printf("%-24s started, idle 2 s, stopped: %.0f ms CPU in all, %.0f ms CPU per second idle\n", k.name, ms(cpu), ms(idle)/2)
	}
	var all []turnResult
	for i := range loops {
		rs, err := h.turnLoop(b, "")
		if err != nil {
			return err
		}
		for _, r := range rs {
			printTurn(fmt.Sprintf("loop %d", i+1), r)
		}
		all = append(all, rs...)
	}
	if h.profile != "" {
		rs, err := h.turnLoop(b, h.profile)
		if err != nil {
			return err
		}
		for _, r := range rs {
			printTurn("profiled", r)
		}
	}
	if v := b.srv.Violations(); len(v) > 0 {
		return fmt.Errorf("the fake server saw %d protocol violations, first: %s", len(v), v[0])
	}
	if len(all) == 0 {
		return nil
	}
	fmt.Println("medians [min to max] over the loops:")
	var names []string
	by := map[string][]turnResult{}
	for _, r := range all {
		if _, ok := by[r.store]; !ok {
			names = append(names, r.store)
		}
		by[r.store] = append(by[r.store], r)
	}
	base := by[names[0]]
	for _, n := range names {
		var per, srv, user, sys, wall, rss, ratio []float64
		for i, r := range by[n] {
			per = append(per, r.perTurn())
			srv = append(srv, r.serverPerTurn())
			user, sys = append(user, ms(r.at.User)), append(sys, ms(r.at.Sys))
			wall, rss = append(wall, r.at.Wall.Seconds()), append(rss, float64(r.at.MaxRSSKB)/1024)
			if i < len(base) {
				ratio = append(ratio, (r.perTurn()+r.serverPerTurn())/base[i].perTurn())
			}
		}
		lo, hi := minMax(per)
		rlo, rhi := minMax(ratio)
		fmt.Printf("  %-24s agentteam %.3f ms/turn [%.3f to %.3f] (user %.0f, sys %.0f ms)  server %.3f ms/turn  wall %.2f s  maxrss %.0f MB  (agentteam+server)/(%s) %.2f [%.2f to %.2f]\n",
			n, median(per), lo, hi, median(user), median(sys), median(srv), median(wall), median(rss), names[0], median(ratio), rlo, rhi)
	}
	return nil
}

func printTurn(loop string, r turnResult) {
	fmt.Printf("%s  %-24s turns %4d  agentteam cpu %7.1f ms (user %6.1f, sys %6.1f) = %.3f ms/turn  server %7.1f ms = %.3f ms/turn (%.0f ms while agentteam ran)  wall %5.2f s  maxrss %5.1f MB  load %.2f\n",
		loop, r.store, r.turns, ms(r.at.CPU()), ms(r.at.User), ms(r.at.Sys), r.perTurn(), ms(r.serverCPU), r.serverPerTurn(), ms(r.serverRun),
		r.at.Wall.Seconds(), float64(r.at.MaxRSSKB)/1024, r.load)
	if r.streams != "" {
		fmt.Printf("  stored: %s\n", r.streams)
	}
}

// turnLoop runs scenario 3 once on every store. With profile set, agentteam
// and the server nodes run in children of this program under pprof.
func (h *harness) turnLoop(b *turnBench, profile string) ([]turnResult, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var out []turnResult
	label := func(store string) string {
		return strings.NewReplacer(" ", "", "/", "_", "(", "", ")", "").Replace(store)
	}
	binFor := func(store, what string) (string, []string) {
		if profile == "" {
			return h.bin, nil
		}
		return self, []string{profiledFlag, profile + "." + label(store) + "." + what}
	}
	for _, d := range h.fileDirs {
		dir, err := h.tempDir(d, "storebench-run-")
		if err != nil {
			return nil, err
		}
		bin, pre := binFor("files "+d, "agentteam")
		r, err := b.run(bin, pre, dir, "", func() time.Duration { return 0 })
		if err == nil {
			err = r.check
		}
		if err != nil {
			return nil, fmt.Errorf("files %s: %w", d, err)
		}
		r.store = "files " + d
		out = append(out, r)
	}
	for _, k := range h.natsKinds() {
		root, err := h.tempDir(h.natsDir, "storebench-nats-")
		if err != nil {
			return nil, err
		}
		serveBin, _ := binFor(k.name, "")
		var pre func(int) []string
		if profile != "" {
			pre = func(i int) []string {
				_, p := binFor(k.name, fmt.Sprintf("node%d", i+1))
				return p
			}
		}
		s, err := startNATS(serveBin, pre, k.replicas, root)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		team := h.team("t")
		url := fmt.Sprintf("%s/%s?replicas=%d", s.url, team, k.replicas)
		bin, binPre := binFor(k.name, "agentteam")
		r, err := b.run(bin, binPre, root, url, s.cpu)
		if err == nil {
			r.streams = s.streamCounts(team)
		}
		cpu, serr := s.stop()
		if err == nil {
			err = r.check
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k.name, err)
		}
		if serr != nil {
			return nil, serr
		}
		r.store, r.serverCPU = k.name, cpu
		out = append(out, r)
	}
	return out, nil
}
