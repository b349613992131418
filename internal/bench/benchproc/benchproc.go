//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

// Package benchproc starts and measures the child processes of the
// benchmark programs (internal/bench/storebench, internal/bench/peerbench): a command
// run to its end through a small launcher that reports its rusage from
// wait4, and long-running children (servers, workers) whose stderr is read
// until they say they are ready and whose CPU is taken when they stop. It
// is not part of agentteam.
package benchproc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Usage is what wait4 reports of a child, and its wall time.
type Usage struct {
	User, Sys, Wall time.Duration
	MaxRSSKB        int64
}

// CPU is user and system time together.
func (u Usage) CPU() time.Duration { return u.User + u.Sys }

// Launch is the launcher: it runs args[0] with args[1:], hands SIGTERM and
// SIGINT on to it, and writes its Usage as JSON to descriptor 3; it returns
// the launcher's exit code. Children are started by this small process
// rather than by a benchmark because Linux starts a child's ru_maxrss at
// the RSS of the process that forked it (exec records the old memory's
// peak), and a benchmark's fake model server holds every request. name
// prefixes its messages.
func Launch(name string, args []string) int {
	if len(args) == 0 {
		fmt.Fprintf(os.Stderr, "%s: launch: no command\n", name)
		return 2
	}
	report := os.NewFile(3, "rusage")
	c := exec.Command(args[0], args[1:]...)
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := c.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: launch: %v\n", name, err)
		return 1
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	done := make(chan struct{})
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		select {
		case s := <-sig:
			_ = c.Process.Signal(s)
		case <-done:
		}
	}()
	err := c.Wait()
	close(done)
	<-forwarded
	signal.Stop(sig)
	wall := time.Since(start)
	ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintf(os.Stderr, "%s: launch: no rusage on this system\n", name)
		return 1
	}
	_ = json.NewEncoder(report).Encode(Usage{User: time.Duration(ru.Utime.Nano()), Sys: time.Duration(ru.Stime.Nano()),
		Wall: wall, MaxRSSKB: ru.Maxrss})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: launch: %v\n", name, err)
		return 1
	}
	return 0
}

// Measure runs c (its Path, Args, Dir, Env and output) to its end through
// this program's launcher, which it calls with launchFlag first (the
// program's main must then call Launch), and returns what the launcher
// reported. An exit with an error is an error with what c wrote to stderr
// when c.Stderr is a *bytes.Buffer.
func Measure(launchFlag string, c *exec.Cmd) (Usage, error) {
	self, err := os.Executable()
	if err != nil {
		return Usage{}, err
	}
	ruR, ruW, err := os.Pipe()
	if err != nil {
		return Usage{}, err
	}
	defer ruR.Close()
	path := c.Path
	if strings.Contains(path, "/") && !filepath.IsAbs(path) {
		// The launcher runs in c.Dir: a path like ./agentteam means this directory's.
		if path, err = filepath.Abs(path); err != nil {
			return Usage{}, err
		}
	}
	l := exec.Command(self, append([]string{launchFlag, path}, c.Args[1:]...)...)
	l.Dir, l.Env, l.Stdin, l.Stdout, l.Stderr, l.ExtraFiles = c.Dir, c.Env, c.Stdin, c.Stdout, c.Stderr, []*os.File{ruW}
	err = l.Start()
	_ = ruW.Close()
	if err != nil {
		return Usage{}, err
	}
	var u Usage
	decErr := json.NewDecoder(ruR).Decode(&u)
	if err := l.Wait(); err != nil {
		if b, ok := c.Stderr.(*bytes.Buffer); ok {
			return u, fmt.Errorf("%s: %w\n%s", c.Args[0], err, b.String())
		}
		return u, fmt.Errorf("%s: %w", c.Args[0], err)
	}
	if decErr != nil {
		return u, fmt.Errorf("%s: no rusage from the launcher: %w", c.Args[0], decErr)
	}
	return u, nil
}

// Proc is a long-running child whose stderr a goroutine of its own reads
// to the end (it ends when the child closes its stderr, at its exit).
type Proc struct {
	Cmd    *exec.Cmd
	stderr chan string // whole once it ends
}

// Start starts c with its stderr read line by line and returns once ready
// finds what it waits for in a line (that value is returned), or, after
// within, kills c and fails with what it said.
func Start(c *exec.Cmd, within time.Duration, ready func(line string) (string, bool)) (*Proc, string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, "", err
	}
	c.Stderr = w
	if err := c.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, "", err
	}
	_ = w.Close()
	p := &Proc{Cmd: c, stderr: make(chan string, 1)}
	found := make(chan string, 1)
	go func() {
		defer r.Close()
		var all strings.Builder
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if v, ok := ready(sc.Text()); ok {
				select {
				case found <- v:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, r)
		close(found)
		p.stderr <- all.String()
	}()
	select {
	case v, ok := <-found:
		if ok {
			return p, v, nil
		}
	case <-time.After(within):
	}
	_ = c.Process.Kill()
	_ = c.Wait()
	return nil, "", fmt.Errorf("%s did not say it was ready: %s", strings.Join(c.Args, " "), <-p.stderr)
}

// Stop ends the child with SIGTERM and returns its whole CPU from wait4.
// Ended by the signal or exiting on it without an error is fine; an exit
// with an error is one, with what it wrote.
func (p *Proc) Stop() (time.Duration, error) {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	err := p.Cmd.Wait()
	out := <-p.stderr
	if p.Cmd.ProcessState == nil {
		return 0, fmt.Errorf("%s: %w", p.Cmd.Args[0], err)
	}
	var cpu time.Duration
	if ru, ok := p.Cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	if err != nil && p.Cmd.ProcessState.Exited() {
		return cpu, fmt.Errorf("%s ended with %w: %s", strings.Join(p.Cmd.Args, " "), err, out)
	}
	return cpu, nil
}

// CPU is the user+sys time the child has used so far, from /proc/PID/stat
// (clock ticks of 10 ms), or 0 if it cannot be read.
func (p *Proc) CPU() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.Cmd.Process.Pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond
}
