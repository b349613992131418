package demo

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func get(t *testing.T, ctx context.Context, h http.Handler) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, BaseURL+"/chat/completions", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	return (&http.Client{Transport: pipeTransport{handler: h}}).Do(req)
}

// The response must arrive while the handler is still writing, or SSE would not stream.
func TestTransportDeliversIncrementally(t *testing.T) {
	release := make(chan struct{})
	ended := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("X-Test", "yes")
		_, _ = io.WriteString(w, "data: first\n\n")
		<-release
		_, _ = io.WriteString(w, "data: second\n\n")
	})
	resp, err := get(t, context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("X-Test") != "yes" {
		t.Fatalf("status %d header %v", resp.StatusCode, resp.Header)
	}
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	if err != nil || line != "data: first\n" {
		t.Fatalf("first line %q, %v (before the handler was released)", line, err)
	}
	close(release)
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "\ndata: second\n\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	<-ended
}

func TestTransportCancelEndsHandler(t *testing.T) {
	ended := make(chan error, 1)
	wrote := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		close(wrote)
		var err error
		for err == nil { // writes until the reader goes away
			_, err = io.WriteString(w, "data: x\n\n")
		}
		<-r.Context().Done()
		ended <- err
	})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := get(t, ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	<-wrote
	cancel()
	if err := <-ended; err == nil {
		t.Fatal("handler writes kept succeeding after cancel")
	}
	if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
		t.Fatalf("reading after cancel: %v", err)
	}
	resp.Body.Close()
}

func TestTransportCancelBeforeHeaders(t *testing.T) {
	ended := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		close(ended)
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := get(t, ctx, h); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	<-ended
}

func TestTransportClosingBodyEndsHandler(t *testing.T) {
	ended := make(chan error, 1)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var err error
		for err == nil {
			_, err = io.WriteString(w, "data: x\n\n")
		}
		ended <- err
	})
	resp, err := get(t, context.Background(), h)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-ended; !errors.Is(err, io.ErrClosedPipe) {
		t.Fatalf("handler write error %v", err)
	}
}

func TestTransportHandlerPanicAndSilence(t *testing.T) {
	resp, err := get(t, context.Background(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 500 || err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("status %d err %v", resp.StatusCode, err)
	}

	resp, err = get(t, context.Background(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || err != nil || len(b) != 0 {
		t.Fatalf("silent handler: %d %q %v", resp.StatusCode, b, err)
	}
}

func TestHandlerUnknownPath(t *testing.T) {
	resp, err := NewHTTPClient().Get("http://demo.agentteam.invalid/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), `"error"`) {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}
