//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentteam/agentteam/internal/bench/benchproc"
	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// natsServer is one JetStream server (replicas 1) or a cluster of three
// (replicas 3), each node an `agentteam serve` process on 127.0.0.1.
type natsServer struct {
	nodes    []*serveProc
	url      string // the first node's client URL: what --store names
	urls     string // every node's client URL, comma-separated
	replicas int
}

// serveProc is one `agentteam serve` child and where it listens.
type serveProc struct {
	*benchproc.Proc
	url string
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
		// It measures the server, not the credentials serve makes.
		args := []string{"serve", "--insecure", "--listen", "127.0.0.1:0", "--data", data}
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
	p, url, err := benchproc.Start(c, 30*time.Second, func(line string) (string, bool) {
		if m := listening.FindStringSubmatch(line); m != nil {
			return m[1], true
		}
		return "", false
	})
	if err != nil {
		return nil, err
	}
	return &serveProc{Proc: p, url: url}, nil
}

// waitJetStream polls, with a bound, until the server or cluster answers
// JetStream requests (a cluster must first elect a meta leader).
func (s *natsServer) waitJetStream() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, s.urls, natsconn.ConnectOptions{Name: "storebench"})
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
		t += p.CPU()
	}
	return t
}

// stop ends every node with SIGTERM and returns their whole CPU from wait4.
func (s *natsServer) stop() (time.Duration, error) {
	var total time.Duration
	var errs []error
	for _, p := range s.nodes {
		cpu, err := p.Stop()
		total += cpu
		if err != nil {
			errs = append(errs, err)
		}
	}
	return total, errors.Join(errs...)
}

// streamCounts says how many messages the team's streams took (the KV
// bucket's stream counts every registry and board write) and how many
// consumers its inbox stream has.
func (s *natsServer) streamCounts(team string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := natsconn.Connect(ctx, s.urls, natsconn.ConnectOptions{Name: "storebench"})
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
