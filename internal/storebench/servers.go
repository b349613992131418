//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/natsstore"
)

// natsServer is one JetStream server (replicas 1) or a cluster of three
// (replicas 3), each node an `agentteam serve` process on 127.0.0.1.
type natsServer struct {
	nodes    []*serveProc
	url      string // the first node's client URL: what --store names
	urls     string // every node's client URL, comma-separated
	replicas int
}

// serveProc is one `agentteam serve` child.
type serveProc struct {
	cmd    *exec.Cmd
	url    string
	stderr chan string // its stderr once it said where it listens, whole at its end
}

var listening = regexp.MustCompile(`listening on (nats://[0-9.:]+)`)

// startNATS starts n nodes (1 or 3) of `bin serve` with their data under
// root and returns once JetStream takes streams. pre, when set, gives the
// arguments put before serve's for node i (the profiled child's).
func startNATS(bin string, pre func(i int) []string, n int, root string) (*natsServer, error) {
	s := &natsServer{replicas: n}
	var addrs, routes []string
	if n > 1 {
		for range n {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				return nil, err
			}
			addrs = append(addrs, l.Addr().String())
			routes = append(routes, "nats://"+l.Addr().String())
			_ = l.Close()
		}
	}
	for i := range n {
		data := filepath.Join(root, fmt.Sprintf("n%d", i+1))
		args := []string{"serve", "--listen", "127.0.0.1:0", "--data", data}
		if n > 1 {
			args = append(args, "--cluster", addrs[i], "--routes", strings.Join(routes, ","),
				"--cluster-name", "bench", "--server-name", fmt.Sprintf("n%d", i+1))
		}
		if pre != nil {
			args = append(pre(i), args...)
		}
		p, err := startServe(bin, root, args)
		if err != nil {
			s.stop()
			return nil, err
		}
		s.nodes = append(s.nodes, p)
	}
	var urls []string
	for _, p := range s.nodes {
		urls = append(urls, p.url)
	}
	s.url, s.urls = urls[0], strings.Join(urls, ",")
	if err := s.waitJetStream(); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

func startServe(bin, dir string, args []string) (*serveProc, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := exec.Command(bin, args...)
	c.Dir = dir
	c.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir)
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	c.Stderr = w
	if err := c.Start(); err != nil {
		_ = r.Close()
		_ = w.Close()
		return nil, err
	}
	_ = w.Close()
	p := &serveProc{cmd: c, stderr: make(chan string, 1)}
	found := make(chan string, 1)
	// The reader ends when the server closes its stderr (at its exit).
	go func() {
		defer r.Close()
		var all strings.Builder
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			all.WriteString(sc.Text() + "\n")
			if m := listening.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, r)
		close(found)
		p.stderr <- all.String()
	}()
	select {
	case u, ok := <-found:
		if ok {
			p.url = u
			return p, nil
		}
	case <-time.After(30 * time.Second):
	}
	_ = c.Process.Kill()
	_ = c.Wait()
	return nil, fmt.Errorf("agentteam %s did not say where it listens: %s", strings.Join(args, " "), <-p.stderr)
}

// waitJetStream polls, with a bound, until the server or cluster answers
// JetStream requests (a cluster must first elect a meta leader).
func (s *natsServer) waitJetStream() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := natsstore.Connect(ctx, s.urls, natsstore.ConnectOptions{Name: "storebench"})
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	for {
		actx, acancel := context.WithTimeout(ctx, time.Second)
		_, err := js.AccountInfo(actx)
		acancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no JetStream on %s after 60 s: %w", s.urls, err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// cpu is the CPU (user+sys) all nodes have used so far, from /proc.
func (s *natsServer) cpu() time.Duration {
	var t time.Duration
	for _, p := range s.nodes {
		t += procCPU(p.cmd.Process.Pid)
	}
	return t
}

// stop ends every node with SIGTERM and returns their whole CPU from wait4.
func (s *natsServer) stop() (time.Duration, error) {
	var total time.Duration
	var errs []error
	for _, p := range s.nodes {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		err := p.cmd.Wait()
		out := <-p.stderr
		if p.cmd.ProcessState == nil {
			errs = append(errs, fmt.Errorf("serve: %w", err))
			continue
		}
		if ru, ok := p.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
		if err != nil && !p.cmd.ProcessState.Exited() {
			// Ended by the signal rather than on it: fine, measured all the same.
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("serve ended with %w: %s", err, out))
		}
	}
	return total, errors.Join(errs...)
}

// procCPU is the user+sys time of a running process from /proc/PID/stat
// (clock ticks of 10 ms), or 0 if it cannot be read.
func procCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(data), ')')
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

// streamCounts says how many messages the team's streams took (the KV
// bucket's stream counts every registry and board write) and how many
// consumers its inbox stream has.
func (s *natsServer) streamCounts(team string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natsstore.Connect(ctx, s.urls, natsstore.ConnectOptions{Name: "storebench"})
	if err != nil {
		return "(" + err.Error() + ")"
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return "(" + err.Error() + ")"
	}
	var parts []string
	for _, st := range []struct{ what, name string }{
		{"KV writes (board)", "KV_" + natsstore.BucketName(team)},
		{"registry writes", "KV_" + natsstore.EntriesBucket(team, "registry")},
		{"inbox messages", natsstore.StreamName(team)},
		{"events", natsstore.EventStreamName(team)},
	} {
		str, err := js.Stream(ctx, st.name)
		if err != nil {
			parts = append(parts, st.what+" ?")
			continue
		}
		info, err := str.Info(ctx)
		if err != nil {
			parts = append(parts, st.what+" ?")
			continue
		}
		p := fmt.Sprintf("%s %d", st.what, info.State.LastSeq)
		if st.name == natsstore.StreamName(team) {
			p += fmt.Sprintf(" (%d consumers)", info.State.Consumers)
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}
