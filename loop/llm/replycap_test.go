package llm

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// hugeServer streams one write_file call whose arguments are total bytes,
// made as they are sent (the test never holds them), in events of chunk
// bytes of arguments each; oneLine sends them all in a single data line.
// It counts what it managed to write before the client hung up.
func hugeServer(t *testing.T, total, chunk int, oneLine bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var wrote atomic.Int64
	// Made once: what the server allocates counts in the test's figure too.
	piece := []byte(strings.Repeat("a", chunk))
	event := []byte(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"` + string(piece) + "\"}}]}}]}\n\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		send := func(b []byte) bool {
			n, err := w.Write(b)
			wrote.Add(int64(n))
			return err == nil
		}
		write := func(s string) bool { return send([]byte(s)) }
		head := `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"x\",\"content\":\""}}]}}]}`
		if !write("data: " + head + "\n\n") {
			return
		}
		if oneLine {
			if !write(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"`) {
				return
			}
			for sent := 0; sent < total; sent += chunk {
				if !send(piece) {
					return
				}
			}
			write("\"}}]}}]}\n\n")
		} else {
			for sent := 0; sent < total; sent += chunk {
				if !send(event) {
					return
				}
			}
		}
		write(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]},"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &wrote
}

// allocated is how many bytes f allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestAHundredMegabyteToolCallIsCutWhileItStreams(t *testing.T) {
	const total = 100 << 20
	for _, tc := range []struct {
		name    string
		oneLine bool
		what    string
	}{
		{"in many events", false, "the arguments of its write_file call"},
		{"in one line", true, "one event of its stream"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, wrote := hugeServer(t, total, 64<<10, tc.oneLine)
			// Small bounds, so that what the reply costs shows against them.
			c := NewClient(ClientConfig{BaseURL: srv.URL + "/v1", APIKey: "k", Model: "m", Stream: true,
				MaxCallArgs: 256 << 10, MaxReplyText: 256 << 10})
			var resp Response
			var err error
			alloc := allocated(func() {
				resp, err = c.Complete(context.Background(), Request{Agent: "alice",
					Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"}}})
			})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Cut == nil || resp.Cut.What != tc.what {
				t.Fatalf("the reply was not cut at its bound: cut %+v", resp.Cut)
			}
			for _, call := range resp.Message.ToolCalls {
				if len(call.Function.Arguments) > 256<<10 {
					t.Errorf("a call kept %d bytes of arguments, over the bound of 256 KiB", len(call.Function.Arguments))
				}
			}
			// What the reply cost is a few times its bound, not its size.
			if alloc > 16<<20 {
				t.Errorf("reading the reply allocated %d MiB", alloc>>20)
			}
			if w := wrote.Load(); w > total/2 {
				t.Errorf("the server wrote %d MiB before the client stopped reading", w>>20)
			}
		})
	}
}

func TestAWholeAnswerPastItsBoundIsCut(t *testing.T) {
	body := `{"choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat("b", 12<<20) + `"},"finish_reason":"stop"}]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	for _, stream := range []bool{false, true} { // a server may send a whole body to a streamed request
		c, _ := newTestClient(t, srv.URL, stream)
		resp, err := c.Complete(context.Background(), Request{Agent: "alice",
			Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"}}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Cut == nil || resp.Message.Content != "" {
			t.Errorf("stream %v: a 12 MiB answer was taken (cut %+v, %d bytes of content)", stream, resp.Cut, len(resp.Message.Content))
		}
	}
}

func TestAReplyPastItsTextBoundKeepsTheBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		piece := strings.Repeat("c", 1<<10)
		for range 100 {
			fmt.Fprintf(w, `data: {"choices":[{"index":0,"delta":{"content":"%s"}}]}`+"\n\n", piece)
		}
		fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	c := NewClient(ClientConfig{BaseURL: srv.URL + "/v1", APIKey: "k", Model: "m", Stream: true, MaxReplyText: 10 << 10})
	resp, err := c.Complete(context.Background(), Request{Agent: "alice",
		Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Cut == nil || resp.Cut.What != "its text" || len(resp.Message.Content) > 10<<10 {
		t.Fatalf("cut %+v, %d bytes of content kept", resp.Cut, len(resp.Message.Content))
	}
}
