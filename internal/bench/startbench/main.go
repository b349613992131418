//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

// Command startbench measures how long agentteam takes to start: wall time
// from fork to exit, the child's CPU (user+sys from wait4), peak RSS and
// minor page faults of a few quick commands, for one or more binaries run
// alternately in the same loop (old, new, old, new…) so that each sees the
// same load. Not part of agentteam (BENCHMARKS.md, "Start-up").
//
//	go build -o /tmp/new/agentteam . && git stash && go build -o /tmp/old/agentteam . && git stash pop
//	go run ./internal/bench/startbench -runs 40 old=/tmp/old/agentteam new=/tmp/new/agentteam
//
// Each command runs in a fresh empty directory (a workspace with no team)
// with HOME pointing at another, stdout and stderr discarded.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"
)

// sample is one run of one command.
type sample struct {
	wall, cpu time.Duration
	maxRSS    int64 // KiB on Linux
	// faults are the minor page faults (ru_minflt): the pages the process
	// touched, which the load does not change.
	faults int64
}

func main() {
	runs := flag.Int("runs", 30, "runs of each command of each binary, interleaved")
	warm := flag.Int("warm", 3, "unmeasured runs of each first (page cache, CPU frequency)")
	cmds := flag.String("cmds", "version;team", "the commands, ';' between them, arguments split on spaces")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: startbench [flags] NAME=BINARY...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	var names, bins []string
	for _, a := range flag.Args() {
		name, bin, ok := strings.Cut(a, "=")
		if !ok {
			name, bin = filepath.Base(filepath.Dir(a)), a
		}
		abs, err := filepath.Abs(bin)
		if err != nil {
			fmt.Fprintf(os.Stderr, "startbench: %v\n", err)
			os.Exit(1)
		}
		names, bins = append(names, name), append(bins, abs)
	}
	dir, err := os.MkdirTemp("", "startbench-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "startbench: %v\n", err)
		os.Exit(1)
	}
	defer os.RemoveAll(dir)
	home := filepath.Join(dir, "home")
	work := filepath.Join(dir, "work")
	for _, d := range []string{home, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			fmt.Fprintf(os.Stderr, "startbench: %v\n", err)
			os.Exit(1)
		}
	}
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"))

	fmt.Printf("%d runs each, interleaved; %s, %d CPUs, load average %s\n", *runs, runtime.GOOS, runtime.NumCPU(), loadavg())
	for _, c := range strings.Split(*cmds, ";") {
		args := strings.Fields(c)
		res := make([][]sample, len(bins))
		for i := 0; i < *warm+*runs; i++ {
			for b, bin := range bins {
				s, err := runOnce(bin, args, work, env)
				if err != nil {
					fmt.Fprintf(os.Stderr, "startbench: %s %s: %v\n", names[b], c, err)
					os.Exit(1)
				}
				if i >= *warm {
					res[b] = append(res[b], s)
				}
			}
		}
		for b := range bins {
			fmt.Printf("%-8s %-12s wall %s   cpu %s   maxrss %d MiB   faults %d\n", names[b], c,
				summary(res[b], func(s sample) time.Duration { return s.wall }),
				summary(res[b], func(s sample) time.Duration { return s.cpu }),
				median(res[b], func(s sample) int64 { return s.maxRSS })/1024,
				median(res[b], func(s sample) int64 { return s.faults }))
		}
	}
	fmt.Printf("load average after: %s\n", loadavg())
}

// runOnce runs bin with args in dir and measures it from fork to wait4.
func runOnce(bin string, args []string, dir string, env []string) (sample, error) {
	c := exec.Command(bin, args...)
	c.Dir, c.Env = dir, env
	start := time.Now()
	if err := c.Run(); err != nil {
		return sample{}, err
	}
	wall := time.Since(start)
	ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return sample{wall: wall}, nil
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return sample{wall: wall, cpu: cpu, maxRSS: ru.Maxrss, faults: ru.Minflt}, nil
}

// summary is "median [p10 to p90] min" in milliseconds: on a loaded
// machine the minimum is the closest to what the process costs alone.
func summary(ss []sample, f func(sample) time.Duration) string {
	d := make([]time.Duration, len(ss))
	for i, s := range ss {
		d[i] = f(s)
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	at := func(q float64) float64 { return float64(d[int(q*float64(len(d)-1))]) / 1e6 }
	return fmt.Sprintf("%6.2f ms [%.2f to %.2f] min %.2f", at(0.5), at(0.1), at(0.9), at(0))
}

func median(ss []sample, f func(sample) int64) int64 {
	r := make([]int64, len(ss))
	for i, s := range ss {
		r[i] = f(s)
	}
	sort.Slice(r, func(i, j int) bool { return r[i] < r[j] })
	return r[len(r)/2]
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
