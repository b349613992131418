package inbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// benchContent is ~200 bytes, as a typical short message between agents.
var benchContent = strings.Repeat("the quick brown fox jumps over the lazy dog. ", 5)[:200]

// benchLine is what Append writes for benchContent, for the baselines.
func benchLine(b *testing.B) []byte {
	b.Helper()
	st := NewStore(b.TempDir())
	if _, err := st.Append(b.Context(), "x", testMsg(benchContent)); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(st.Path("x"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// splitN runs fn n times in total across w goroutines.
func splitN(b *testing.B, w int, fn func() error) {
	var wg sync.WaitGroup
	for g := range w {
		count := b.N / w
		if g < b.N%w {
			count++
		}
		wg.Go(func() {
			for range count {
				if err := fn(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// bareAppend is the floor an inbox write could reach: open, one write, close, no lock.
func bareAppend(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(line)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func benchBaseline(b *testing.B, writers int) {
	line := benchLine(b)
	path := filepath.Join(b.TempDir(), "bob.jsonl")
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	splitN(b, writers, func() error { return bareAppend(path, line) })
}

func benchAppend(b *testing.B, writers int) {
	b.SetBytes(int64(len(benchLine(b))))
	st := NewStore(b.TempDir())
	b.ResetTimer()
	splitN(b, writers, func() error {
		_, err := st.Append(b.Context(), "bob", testMsg(benchContent))
		return err
	})
}

func BenchmarkAppendBaseline1(b *testing.B) { benchBaseline(b, 1) }
func BenchmarkAppend1(b *testing.B)         { benchAppend(b, 1) }
func BenchmarkAppendBaseline8(b *testing.B) { benchBaseline(b, 8) }
func BenchmarkAppend8(b *testing.B)         { benchAppend(b, 8) }

// BenchmarkAppendBaselineOpenFD1 keeps one descriptor open: the floor of a
// writer that could hold its file, which an inbox sender cannot.
func BenchmarkAppendBaselineOpenFD1(b *testing.B) {
	line := benchLine(b)
	f, err := os.OpenFile(filepath.Join(b.TempDir(), "bob.jsonl"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	b.SetBytes(int64(len(line)))
	b.ResetTimer()
	for range b.N {
		if _, err := f.Write(line); err != nil {
			b.Fatal(err)
		}
	}
}

func reportPercentiles(b *testing.B, d []time.Duration, unit string, scale time.Duration) {
	slices.Sort(d)
	at := func(p float64) float64 { return float64(d[int(p*float64(len(d)-1))]) / float64(scale) }
	b.ReportMetric(at(0.50), "p50-"+unit)
	b.ReportMetric(at(0.99), "p99-"+unit)
}

func BenchmarkWakeInProcess(b *testing.B) {
	st := NewStore(b.TempDir())
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := st.Watch(ctx, "bob")
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := st.Append(ctx, "bob", testMsg(benchContent)); err != nil {
			b.Fatal(err)
		}
		<-ch
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, lat, "us", time.Microsecond)
}

// BenchmarkWakeCrossProcess asks a child process to append and times until
// this process's Watch fires (pipe + child's Append + inotify + fan-out).
func BenchmarkWakeCrossProcess(b *testing.B) {
	st := NewStoreWithOptions(b.TempDir(), StoreOptions{PollInterval: time.Minute})
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ch := st.Watch(ctx, "bob")
	c := startChild(b, "serve", envs(envDir, st.Dir(), envName, "bob")...)
	defer c.wait(b)
	n := min(b.N, 200)
	lat := make([]time.Duration, 0, n)
	b.ResetTimer()
	for i := range n {
		t0 := time.Now()
		if _, err := fmt.Fprintf(c.stdin, "m%d\n", i); err != nil {
			b.Fatal(err)
		}
		receive(b, ch, "cross-process wake")
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	reportPercentiles(b, lat, "ms", time.Millisecond)
}
