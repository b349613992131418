package tools

import (
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

func TestTruncateMiddle(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		limit int
		want  string
	}{
		{"fits", "abcdef", 6, "abcdef"},
		{"cut", "aaaXXXXbbb", 6, "aaa\n\n[... 4 bytes cut from the middle ...]\n\nbbb"},
		{"odd limit", "aaXXXXbbb", 5, "aa\n\n[... 4 bytes cut from the middle ...]\n\nbbb"},
		// "é" is 2 bytes; a cut through it moves to the rune edge and counts the byte.
		{"rune at head edge", "aéXXXXXé", 4, "a\n\n[... 7 bytes cut from the middle ...]\n\né"},
		{"rune at tail edge", "abXXXXéb", 4, "ab\n\n[... 6 bytes cut from the middle ...]\n\nb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := truncateMiddle(tc.in, tc.limit)
			if got != tc.want {
				t.Fatalf("truncateMiddle(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
			}
			if !utf8.ValidString(got) {
				t.Fatalf("result is not valid UTF-8: %q", got)
			}
		})
	}
}

func TestCapWriterMatchesTruncateMiddle(t *testing.T) {
	var in strings.Builder
	for i := range 5000 {
		in.WriteString(strings.Repeat(string(rune('a'+i%26)), i%7))
		in.WriteString("\n")
	}
	s := in.String()
	for _, limit := range []int{10, 101, 4096, len(s), len(s) + 5} {
		for _, chunk := range []int{1, 3, 64, 1 << 20} {
			w := newCapWriter(limit)
			for rest := s; rest != ""; {
				n := min(chunk, len(rest))
				if k, err := w.Write([]byte(rest[:n])); k != n || err != nil {
					t.Fatalf("Write = %d, %v", k, err)
				}
				rest = rest[n:]
			}
			if got, want := w.String(), truncateMiddle(s, limit); got != want {
				t.Fatalf("limit %d chunk %d: capWriter kept %d bytes, truncateMiddle %d", limit, chunk, len(got), len(want))
			}
		}
	}
}

func BenchmarkCapWriter(b *testing.B) {
	line := []byte(strings.Repeat("x", 79) + "\n")
	b.SetBytes(int64(len(line)))
	w := newCapWriter(DefaultOutputCap)
	for b.Loop() {
		w.Write(line)
	}
}

func TestCapWriterConcurrentWrites(t *testing.T) {
	w := newCapWriter(64)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				w.Write([]byte("0123456789"))
			}
		})
	}
	wg.Wait()
	if w.total != 8*1000*10 {
		t.Fatalf("total = %d, want %d", w.total, 8*1000*10)
	}
	if !strings.Contains(w.String(), "[... 79936 bytes cut") {
		t.Fatalf("String = %q", w.String())
	}
}
