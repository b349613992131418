//go:build linux

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentteam/agentteam/inbox"
)

// appendScenario is scenario 1: for each shape and count of appenders,
// every store in turn (so all see the same minute's load).
func (h *harness) appendScenario(ns []int, shapes []string, secs float64) error {
	servers, err := h.startServers()
	defer stopAll(servers)
	if err != nil {
		return err
	}
	fmt.Printf("\n## 1. Append throughput: N goroutines of one process append %d-byte lines for %.1f s\n", lineBytes(), secs)
	fmt.Println("(CPU per message: the appending process's getrusage over the timed part; the servers' from /proc, 10 ms ticks)")
	self, err := os.Executable()
	if err != nil {
		return err
	}
	for _, shape := range shapes {
		shape = strings.TrimSpace(shape)
		for _, n := range ns {
			confs, err := h.confs(servers)
			if err != nil {
				return err
			}
			for _, c := range confs {
				srv := serverOf(c, servers)
				load := loadavg()
				r, srvCPU, err := runAppend(self, c, srv, n, shape, secs)
				if err != nil {
					return err
				}
				fmt.Printf("%-4s N=%-3d %-24s %9.0f msgs/s  appender %6.1f µs CPU/msg  server %6.1f µs CPU/msg  errors %d  load %.2f\n",
					shape, n, c.name, float64(r.Count)/r.Wall.Seconds(),
					float64(r.CPU.Microseconds())/float64(r.Count), float64(srvCPU.Microseconds())/float64(r.Count), r.Errors, load)
				if r.Errors > 0 {
					fmt.Printf("  first error: %s\n", r.FirstErr)
				}
			}
		}
	}
	return nil
}

// wakeScenario is scenario 2, every store in turn.
func (h *harness) wakeScenario(sends int, pace time.Duration) error {
	servers, err := h.startServers()
	defer stopAll(servers)
	if err != nil {
		return err
	}
	fmt.Printf("\n## 2. send → wake across two processes: %d sends %s apart per store\n", sends, pace)
	fmt.Println("(wake: Append called → the receiver's Watch fired; in hand: → its ReadUnread returned the message)")
	confs, err := h.confs(servers)
	if err != nil {
		return err
	}
	for _, c := range confs {
		if c.dir != "" {
			if err := os.MkdirAll(c.dir, 0o755); err != nil {
				return err
			}
		}
		srv := serverOf(c, servers)
		serverCPU := func() time.Duration { return 0 }
		if srv != nil {
			serverCPU = srv.cpu
		}
		load := loadavg()
		r, appends, srvCPU, err := wakeRun(c, sends, pace, serverCPU)
		if err != nil {
			return fmt.Errorf("wake %s: %w", c.name, err)
		}
		fmt.Printf("%-24s wake p50 %.3f p99 %.3f max %.3f ms (%d, %d stale)  in hand p50 %.3f p99 %.3f max %.3f ms  append p50 %.3f p99 %.3f ms  CPU/msg receiver %.0f µs server %.0f µs  load %.2f\n",
			c.name, ms(quantile(r.Wake, .5)), ms(quantile(r.Wake, .99)), ms(quantile(r.Wake, 1)), len(r.Wake), r.Stale,
			ms(quantile(r.InHand, .5)), ms(quantile(r.InHand, .99)), ms(quantile(r.InHand, 1)),
			ms(quantile(appends, .5)), ms(quantile(appends, .99)),
			float64(r.CPU.Microseconds())/float64(sends), float64(srvCPU.Microseconds())/float64(sends), load)
		if r.CommitErrors > 0 {
			fmt.Printf("  %d Commits failed (each batch was read again), the first: %s\n", r.CommitErrors, r.FirstCommitErr)
		}
	}
	return nil
}

// cpus says how many CPUs and which model.
func cpus() string {
	model := ""
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), %s", runtime.NumCPU(), model, runtime.Version())
}

// fsType names the file system d is on.
func fsType(d string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(d, &st); err != nil {
		return "unknown (" + err.Error() + ")"
	}
	switch st.Type {
	case 0xEF53:
		return "ext2/3/4"
	case 0x01021994:
		return "tmpfs"
	case 0x9123683E:
		return "btrfs"
	case 0x58465342:
		return "xfs"
	case 0x794c7630:
		return "overlayfs"
	}
	return fmt.Sprintf("fs type %#x", st.Type)
}

// runAppend runs one append child and reads the server's CPU over its
// timed part (from its "go" line to its result).
func runAppend(self string, c storeConf, srv *natsServer, n int, shape string, secs float64) (appendResult, time.Duration, error) {
	cmd := exec.Command(self, appendFlag, strconv.Itoa(n), shape, strconv.FormatFloat(secs, 'f', -1, 64))
	cmd.Env = append(os.Environ(), c.env())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return appendResult{}, 0, err
	}
	if err := cmd.Start(); err != nil {
		return appendResult{}, 0, err
	}
	rd := bufio.NewReader(out)
	line, err := rd.ReadString('\n')
	if err != nil || strings.TrimSpace(line) != "go" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return appendResult{}, 0, fmt.Errorf("append %s: the child did not start: %q %v", c.name, line, err)
	}
	var s0 time.Duration
	if srv != nil {
		s0 = srv.cpu()
	}
	var r appendResult
	decErr := json.NewDecoder(rd).Decode(&r)
	var srvCPU time.Duration
	if srv != nil {
		srvCPU = srv.cpu() - s0
	}
	if err := cmd.Wait(); err != nil {
		return r, 0, fmt.Errorf("append %s: %w", c.name, err)
	}
	if decErr != nil {
		return r, 0, fmt.Errorf("append %s: %w", c.name, decErr)
	}
	return r, srvCPU, nil
}

// commitScenario is a check beside the figures: rounds of Append, then
// ReadUnread and Commit of that one message through a second opening of
// the store, one after the other; a Commit should never fail here.
func (h *harness) commitScenario(rounds int) error {
	servers, err := h.startServers()
	defer stopAll(servers)
	if err != nil {
		return err
	}
	fmt.Printf("\n## Commit right after a read: %d rounds of Append → ReadUnread → Commit, one at a time\n", rounds)
	confs, err := h.confs(servers)
	if err != nil {
		return err
	}
	for _, c := range confs {
		w, wclose, err := c.open()
		if err != nil {
			return err
		}
		rd, rclose, err := c.open()
		if err != nil {
			wclose()
			return err
		}
		ctx := context.Background() // a benchmark run: nothing cancels it
		fails, first := 0, ""
		start := time.Now()
		for i := range rounds {
			if _, err := w.Append(ctx, "c", inbox.Message{Type: inbox.TypeMessage, From: "lead", Content: strconv.Itoa(i)}); err != nil {
				wclose()
				rclose()
				return err
			}
			b, err := rd.ReadUnread(ctx, "c")
			if err != nil {
				wclose()
				rclose()
				return err
			}
			if err := rd.Commit(ctx, "c", b); err != nil {
				fails++
				if first == "" {
					first = err.Error()
				}
			}
		}
		wall := time.Since(start)
		wclose()
		rclose()
		fmt.Printf("%-24s %d of %d Commits failed  (%.0f µs a round)\n", c.name, fails, rounds, float64(wall.Microseconds())/float64(rounds))
		if first != "" {
			fmt.Printf("  the first: %s\n", first)
		}
	}
	return nil
}

// consumerScenario measures what a teammate's first look at its inbox
// costs on JetStream: HasUnread creates the agent's durable consumer (on R3
// a raft group on every node).
func (h *harness) consumerScenario(n int) error {
	servers, err := h.startServers()
	defer stopAll(servers)
	if err != nil {
		return err
	}
	fmt.Printf("\n## Durable consumers: %d inboxes looked at for the first time (HasUnread creates each consumer)\n", n)
	confs, err := h.confs(servers)
	if err != nil {
		return err
	}
	for _, c := range confs {
		srv := serverOf(c, servers)
		if srv == nil {
			continue
		}
		mb, closeFn, err := c.open()
		if err != nil {
			return err
		}
		look, ok := mb.(interface {
			HasUnread(context.Context, string) (bool, error)
		})
		if !ok {
			closeFn()
			return fmt.Errorf("%s: no HasUnread", c.name)
		}
		ctx := context.Background() // a benchmark run: nothing cancels it
		before, s0, start := rusageSelf(), srv.cpu(), time.Now()
		for i := range n {
			if _, err := look.HasUnread(ctx, fmt.Sprintf("w%03d", i)); err != nil {
				closeFn()
				return fmt.Errorf("%s: %w", c.name, err)
			}
		}
		wall, client, server := time.Since(start), rusageSelf()-before, srv.cpu()-s0
		closeFn()
		fmt.Printf("%-24s %.2f ms a consumer; CPU a consumer: servers %.2f ms, this process %.2f ms\n",
			c.name, ms(wall)/float64(n), ms(server)/float64(n), ms(client)/float64(n))
	}
	return nil
}
