//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/bench/benchproc"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// startWorker starts `bin worker` on url in its own workspace and returns
// once it says it takes spawns.
// pre goes before the worker's arguments (this program's profiled child).
func startWorker(bin string, pre []string, dir, id, url, baseURL string, slots, queue int) (*benchproc.Proc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "noop.txt"), []byte("ok\n"), 0o644); err != nil {
		return nil, err
	}
	c := exec.Command(bin, append(append([]string(nil), pre...), "worker", "--store", url, "--id", id, "--workspace", dir, "--base-url", baseURL,
		"--model", "fake-model", "--max-workers", strconv.Itoa(slots), "--max-queue", strconv.Itoa(queue))...)
	c.Dir = dir
	c.Env = append(os.Environ(), "OPENAI_API_KEY=k", "XDG_CONFIG_HOME="+dir, "AGENTTEAM_STORE=")
	p, _, err := benchproc.Start(c, 60*time.Second, func(line string) (string, bool) {
		return "", strings.Contains(line, ": taking ")
	})
	if err != nil {
		return nil, fmt.Errorf("worker %s: %w", id, err)
	}
	return p, nil
}

// workerScenario is the workers' scaling figure: agents teammates × 3 turns
// with a model latency, on JetStream R1, run by the lead's process alone
// (it is a worker too) and by it with more `agentteam worker` processes,
// each with slots places; the wall time of `agentteam run` is compared.
// With -cpuprofile, the run and the workers run in this program's profiled
// child (which must then be built from a tree that has agentteam worker).
func (h *harness) workerScenario(counts []int, agents, slots int, delay time.Duration, loops int) error {
	b := &turnBench{teamBin: h.bin, agents: agents, workers: slots}
	var span turnSpan
	b.srv = fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if c.Agent != inbox.LeadName {
			span.saw(time.Now())
		}
		r := b.script(c)
		r.Delay = delay
		return r
	})
	defer b.srv.Close()
	fmt.Printf("\n## Workers: %d teammates × 3 turns, model latency %s, %d places per process, JetStream R1\n", agents, delay, slots)
	walls, works := map[int][]float64{}, map[int][]float64{}
	for i := range loops {
		for _, n := range counts {
			root, err := h.tempDir(h.natsDir, "storebench-workers-")
			if err != nil {
				return err
			}
			bin, binFor := h.bin, func(string) []string { return nil }
			var srvPre func(int) []string
			if h.profile != "" {
				self, err := os.Executable()
				if err != nil {
					return err
				}
				bin = self
				binFor = func(what string) []string {
					return []string{profiledFlag, fmt.Sprintf("%s.workers%d.loop%d.%s", h.profile, n, i+1, what)}
				}
				srvPre = func(int) []string { return binFor("server") }
			}
			s, err := startNATS(bin, srvPre, 1, root)
			if err != nil {
				return err
			}
			url := s.url + "/" + h.team("w")
			var calls *callCounter
			if h.countCalls {
				if calls, err = countCalls(s.url); err != nil {
					_, _ = s.stop()
					return err
				}
			}
			var ws []*benchproc.Proc
			for k := 1; k < n; k++ {
				w, err := startWorker(bin, binFor(fmt.Sprintf("worker%d", k)), filepath.Join(root, fmt.Sprintf("worker%d", k)), fmt.Sprintf("w%d", k), url, b.srv.URL(), slots, agents+spawnBatch)
				if err != nil {
					for _, w := range ws {
						_, _ = w.Stop()
					}
					_, _ = s.stop()
					return err
				}
				ws = append(ws, w)
			}
			span.reset()
			r, runErr := b.run(bin, binFor("run"), root, url, s.cpu)
			var workersCPU time.Duration
			var errs []error
			for _, w := range ws {
				cpu, err := w.Stop()
				workersCPU += cpu
				if err != nil {
					errs = append(errs, err)
				}
			}
			var counted map[string]int
			if calls != nil {
				counted = calls.stop()
			}
			srvCPU, serr := s.stop()
			if runErr != nil {
				return fmt.Errorf("%d workers: %w", n, runErr)
			}
			if serr != nil {
				return serr
			}
			if len(errs) > 0 {
				return errs[0]
			}
			if r.check != nil {
				// Reported, not fatal: the wall time is still the run's.
				fmt.Printf("  the team's end: %v\n", r.check)
			}
			walls[n] = append(walls[n], r.at.Wall.Seconds())
			first, last := span.get()
			works[n] = append(works[n], last.Sub(first).Seconds())
			fmt.Printf("loop %d  %d worker(s)  wall %6.2f s  turns %d  CPU: run %6.0f ms, other workers %6.0f ms, server %6.0f ms  load %.2f\n",
				i+1, n, r.at.Wall.Seconds(), r.turns, ms(r.at.CPU()), ms(workersCPU), ms(srvCPU), r.load)
			fmt.Printf("        teammates' model calls from %.2f s to %.2f s of the run (%.2f s); after the last, %.2f s to the run's end (shutting the team down)\n",
				first.Sub(r.started).Seconds(), last.Sub(r.started).Seconds(), last.Sub(first).Seconds(), r.started.Add(r.at.Wall).Sub(last).Seconds())
			if counted != nil {
				printCalls(counted, int(r.turns))
			}
		}
	}
	if len(counts) > 1 {
		base := walls[counts[0]]
		for _, n := range counts[1:] {
			var ratios []float64
			for i, w := range walls[n] {
				if i < len(base) {
					ratios = append(ratios, base[i]/w)
				}
			}
			lo, hi := minMax(ratios)
			fmt.Printf("wall with %d worker(s) / wall with %d: %.2f [%.2f to %.2f] over %d loops\n", counts[0], n, median(ratios), lo, hi, len(ratios))
			ratios = ratios[:0]
			for i, w := range works[n] {
				if i < len(works[counts[0]]) && w > 0 {
					ratios = append(ratios, works[counts[0]][i]/w)
				}
			}
			lo, hi = minMax(ratios)
			fmt.Printf("teammates' span of model calls with %d worker(s) / with %d: %.2f [%.2f to %.2f]\n", counts[0], n, median(ratios), lo, hi)
		}
	}
	return nil
}

// turnSpan is when the teammates' first and last model calls of a run came.
type turnSpan struct {
	mu          sync.Mutex
	first, last time.Time
}

func (s *turnSpan) saw(t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first.IsZero() {
		s.first = t
	}
	s.last = t
}

func (s *turnSpan) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.first, s.last = time.Time{}, time.Time{}
}

func (s *turnSpan) get() (first, last time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.first, s.last
}
