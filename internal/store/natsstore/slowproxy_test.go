package natsstore_test

import (
	"net"
	"sync"
	"testing"
	"time"
)

// slowProxy is a TCP proxy to a NATS server whose answers a test can make
// late: each chunk the server sends is handed on delay after it came, in
// order, as a client whose process is too busy to read them sees them.
type slowProxy struct {
	ln     net.Listener
	target string

	closed chan struct{} // closed at the test's end: nothing more is handed on

	mu    sync.Mutex
	delay time.Duration
	conns []net.Conn
	wg    sync.WaitGroup
}

func startSlowProxy(t *testing.T, target string) *slowProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &slowProxy{ln: ln, target: target, closed: make(chan struct{})}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		close(p.closed)
		_ = ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

// url is the proxy's address as a NATS URL.
func (p *slowProxy) url() string { return "nats://" + p.ln.Addr().String() }

// setDelay makes every answer from now on arrive d late.
func (p *slowProxy) setDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

func (p *slowProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { // client to server: at once
			defer p.wg.Done()
			defer func() { _ = s.Close() }()
			buf := make([]byte, 32<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					if _, werr := s.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}()
		go p.late(s, c)
	}
}

// late copies src to dst, each chunk delay after it was read.
func (p *slowProxy) late(src, dst net.Conn) {
	defer p.wg.Done()
	type chunk struct {
		at   time.Time
		data []byte
	}
	queue := make(chan chunk, 4096)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() { _ = dst.Close() }()
		for ch := range queue {
			select {
			case <-time.After(time.Until(ch.at)):
			case <-p.closed:
			}
			if _, err := dst.Write(ch.data); err != nil {
				for range queue { // drain until the reader ends
				}
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			d := p.delay
			p.mu.Unlock()
			queue <- chunk{at: time.Now().Add(d), data: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			close(queue)
			<-done
			return
		}
	}
}
