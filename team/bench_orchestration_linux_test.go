package team

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/llm/fakellm"
	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/team/registry"
	"github.com/agentteam/agentteam/workspace"
)

// The orchestration scenario: the lead spawns 200 teammates in
// four turns of 50 spawn_teammate calls; each teammate reads a small file,
// sends the lead a progress message and replies; the lead answers each wake
// with a short reply. MaxQueue is 250 so no spawn is refused.
const (
	orchTeammates = 200
	orchBatch     = 50
	orchWorkers   = 10
	orchQueue     = 250
)

// plannedCall is a tool call of the script, for either model.
type plannedCall struct{ name, args string }

// orchPlan is the scripted reply of an agent that has already made n
// assistant messages in its conversation.
func orchPlan(agent string, n int) (string, []plannedCall) {
	if agent == inbox.LeadName {
		if n*orchBatch >= orchTeammates {
			return "noted", nil
		}
		calls := make([]plannedCall, 0, orchBatch)
		for i := n * orchBatch; i < min((n+1)*orchBatch, orchTeammates); i++ {
			calls = append(calls, plannedCall{"spawn_teammate",
				fmt.Sprintf(`{"name":"w%03d","role":"worker","prompt":"read data.txt and report"}`, i)})
		}
		return "", calls
	}
	switch n {
	case 0:
		return "", []plannedCall{{"read_file", `{"path":"data.txt"}`}}
	case 1:
		return "", []plannedCall{{"send_message", fmt.Sprintf(`{"to":"lead","content":"%s read the file"}`, agent)}}
	}
	return agent + " done: data.txt has 16 lines", nil
}

func assistantCount(msgs []openai.ChatCompletionMessage) int {
	n := 0
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleAssistant {
			n++
		}
	}
	return n
}

// scriptedModel is llm.Model in process with no latency, so the CPU
// measured is the team's own: loop, tools, inbox, registry, events, sessions.
type scriptedModel struct{ turns atomic.Int64 }

func (m *scriptedModel) Complete(ctx context.Context, req llm.Request) (llm.Response, error) {
	m.turns.Add(1)
	n := assistantCount(req.Messages)
	content, planned := orchPlan(req.Agent, n)
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: content}
	for i, c := range planned {
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: fmt.Sprintf("call_%s_%d_%d", req.Agent, n, i),
			Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: c.name, Arguments: c.args}})
	}
	reason := "stop"
	if len(planned) > 0 {
		reason = "tool_calls"
	}
	return llm.Response{Message: msg, FinishReason: reason,
		Usage: openai.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}, nil
}

// orchModel builds a model for one run and returns it with its turn count
// and a function that releases it.
type orchModel func(b *testing.B) (llm.Model, func() int64, func())

func inProcessModel(*testing.B) (llm.Model, func() int64, func()) {
	m := &scriptedModel{}
	return m, m.turns.Load, func() {}
}

// fakeServerModel answers the same script over loopback HTTP with
// streaming; the fake server runs in this process, so its CPU counts too.
func fakeServerModel(*testing.B) (llm.Model, func() int64, func()) {
	var turns atomic.Int64
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		turns.Add(1)
		content, planned := orchPlan(c.Agent, assistantCount(c.Req.Messages))
		r := fakellm.Reply{Content: content}
		for _, p := range planned {
			r.ToolCalls = append(r.ToolCalls, fakellm.ToolCall{Name: p.name, Args: p.args})
		}
		return r
	})
	client := llm.NewClient(llm.ClientConfig{BaseURL: srv.URL(), APIKey: "k", Model: "fake", Stream: true})
	return client, turns.Load, srv.Close
}

// BenchmarkOrchestrationInProcess: 200 teammates × 3 turns, 10 workers, in-process model.
func BenchmarkOrchestrationInProcess(b *testing.B) { benchOrchestration(b, inProcessModel) }

// BenchmarkOrchestrationFakeServer: the same over HTTP/SSE to internal/llm/fakellm.
func BenchmarkOrchestrationFakeServer(b *testing.B) { benchOrchestration(b, fakeServerModel) }

func benchOrchestration(b *testing.B, mk orchModel) {
	var cpu, sys time.Duration
	var turns int64
	var allocated uint64
	var heapPeak uint64
	b.StopTimer()
	for range b.N {
		ws, err := workspace.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		data := strings.Repeat("a line of the small file teammates read\n", 16)
		if err := os.WriteFile(filepath.Join(ws.Root, "data.txt"), []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
		model, count, release := mk(b)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		tm, err := Open(ctx, Options{Workspace: ws, Model: model, MaxWorkers: orchWorkers, MaxQueue: orchQueue})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		stopSampler := sampleHeap(ctx)
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		cpu0, sys0 := cpuTime(b), sysTime(b)

		b.StartTimer()
		final, err := tm.Run(ctx, "spawn 200 workers and collect their reports")
		b.StopTimer()

		cpu += cpuTime(b) - cpu0
		sys += sysTime(b) - sys0
		runtime.ReadMemStats(&ms1)
		allocated += ms1.TotalAlloc - ms0.TotalAlloc
		heapPeak = max(heapPeak, stopSampler())
		turns += count()
		if err != nil {
			b.Fatal(err)
		}
		checkOrchestration(b, tm, final)
		_ = tm.Close(context.Background())
		cancel()
		release()
	}
	if turns == 0 {
		b.Fatal("no model turns")
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(turns), "cpu-us/turn")
	b.ReportMetric(float64(sys.Microseconds())/float64(turns), "sys-us/turn")
	b.ReportMetric(float64(turns)/float64(b.N), "turns/op")
	b.ReportMetric(float64(allocated)/float64(turns)/1024, "alloc-KB/turn")
	b.ReportMetric(float64(heapPeak)/(1<<20), "heap-peak-MB")
	b.ReportMetric(float64(maxRSS(b))/1024, "maxrss-MB")
}

// checkOrchestration: every teammate ran one cycle of exactly three turns
// and the lead got a progress message and a result from each.
func checkOrchestration(b *testing.B, tm *Team, final string) {
	b.Helper()
	if final != "noted" {
		b.Fatalf("final answer %q", final)
	}
	cfg, err := tm.Registry().Read(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	if len(cfg.Teammates) != orchTeammates {
		b.Fatalf("%d teammates registered, want %d", len(cfg.Teammates), orchTeammates)
	}
	for _, m := range cfg.Teammates {
		if m.Status != registry.StatusShutdown || m.Turns != 3 || m.Cycles != 1 {
			b.Fatalf("%s: status %s, %d turns in %d cycles", m.Name, m.Status, m.Turns, m.Cycles)
		}
	}
	msgs, _, err := tm.Mailbox().ReadAll(b.Context(), inbox.LeadName)
	if err != nil {
		b.Fatal(err)
	}
	if len(msgs) != 2*orchTeammates {
		b.Fatalf("the lead got %d messages, want %d", len(msgs), 2*orchTeammates)
	}
}

// cpuTime is user+system CPU of the whole process so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// sysTime is the kernel's share of cpuTime: syscalls made for the process.
func sysTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Stime.Nano())
}

// maxRSS is the process's peak resident set in KiB (Linux units), over its life.
func maxRSS(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Maxrss
}

// sampleHeap polls the heap-in-use metric (HeapAlloc) every 5 ms until the
// returned function is called, which returns the peak seen.
func sampleHeap(ctx context.Context) func() uint64 {
	stop := make(chan struct{})
	peak := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var top uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			top = max(top, s[0].Value.Uint64())
			select {
			case <-stop:
				peak <- top
				return
			case <-ctx.Done():
				peak <- top
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		return <-peak
	}
}
