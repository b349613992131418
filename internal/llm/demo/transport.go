package demo

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// NewHTTPClient returns a client whose requests are answered by the demo
// model in-process: no socket, streams delivered as they are written.
func NewHTTPClient() *http.Client {
	return &http.Client{Transport: pipeTransport{handler: Handler()}}
}

// pipeTransport runs a handler per request and pipes its output back.
type pipeTransport struct {
	handler http.Handler
}

func (t pipeTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	pr, pw := io.Pipe()
	rw := &pipeResponseWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
	served := req.Clone(ctx)
	if served.Body == nil {
		served.Body = http.NoBody
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			if v := recover(); v != nil {
				rw.WriteHeader(http.StatusInternalServerError)
				_ = pw.CloseWithError(fmt.Errorf("demo model failed: %v", v))
				return
			}
			rw.WriteHeader(http.StatusOK) // a handler that wrote nothing answered 200
			_ = pw.Close()
		}()
		t.handler.ServeHTTP(rw, served)
	}()
	go func() {
		select {
		case <-ctx.Done():
			// Unblocks the handler's writes and the reader's reads.
			_ = pw.CloseWithError(ctx.Err())
		case <-done:
		}
	}()
	select {
	case <-rw.ready:
	case <-ctx.Done():
	}
	// A request canceled before its headers fails, as net/http's does, even
	// when a handler that saw the cancel answered first (select picks at
	// random between two ready cases).
	if err := ctx.Err(); err != nil {
		_ = pr.CloseWithError(err)
		return nil, fmt.Errorf("demo model: %w", err)
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", rw.status, http.StatusText(rw.status)),
		StatusCode:    rw.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rw.sent,
		Body:          pr,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// pipeResponseWriter is an http.ResponseWriter whose body is a pipe; its
// headers are handed over (ready closes) on the first WriteHeader or Write.
type pipeResponseWriter struct {
	header http.Header
	body   *io.PipeWriter
	once   sync.Once
	ready  chan struct{}
	status int         // set before ready closes
	sent   http.Header // snapshot of header at that moment
}

func (w *pipeResponseWriter) Header() http.Header { return w.header }

func (w *pipeResponseWriter) WriteHeader(code int) {
	w.once.Do(func() {
		w.status = code
		w.sent = w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeResponseWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	n, err := w.body.Write(b)
	if err != nil {
		return n, fmt.Errorf("demo response: %w", err)
	}
	return n, nil
}

// Flush is a no-op: every Write already reaches the reader through the pipe.
func (w *pipeResponseWriter) Flush() {}
