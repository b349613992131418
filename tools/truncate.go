package tools

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// joinCut renders head, a marker for cut bytes, and tail. The cut edges are
// moved to rune boundaries so the result stays valid UTF-8 where the input was.
func joinCut(head, tail []byte, cut int64) string {
	if cut <= 0 {
		return string(head) + string(tail)
	}
	for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
		if utf8.RuneStart(head[i]) {
			if !utf8.FullRune(head[i:]) { // the cut split this rune
				cut += int64(len(head) - i)
				head = head[:i]
			}
			break
		}
	}
	for n := 0; n < utf8.UTFMax && len(tail) > 0 && !utf8.RuneStart(tail[0]); n++ {
		tail = tail[1:]
		cut++
	}
	return fmt.Sprintf("%s\n\n[... %d bytes cut from the middle ...]\n\n%s", head, cut, tail)
}

// truncateMiddle keeps the first and last limit/2 bytes of s.
func truncateMiddle(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	h := limit / 2
	t := limit - h
	return joinCut([]byte(s[:h]), []byte(s[len(s)-t:]), int64(len(s)-h-t))
}

// capWriter keeps the first and last bytes written to it, up to limit in
// all, so a command that prints gigabytes costs no more than limit memory.
type capWriter struct {
	mu      sync.Mutex
	headCap int
	tailCap int
	head    []byte
	tail    []byte // the last bytes; may briefly hold up to 2*tailCap
	total   int64
}

func newCapWriter(limit int) *capWriter {
	h := limit / 2
	return &capWriter{headCap: h, tailCap: limit - h}
}

func (w *capWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	w.total += int64(n)
	if room := w.headCap - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > w.tailCap {
		p = p[len(p)-w.tailCap:]
	}
	w.tail = append(w.tail, p...)
	if len(w.tail) > 2*w.tailCap {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-w.tailCap:]...)
	}
	return n, nil
}

// String is everything kept, with a marker where bytes were cut.
func (w *capWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	tail := w.tail
	if len(tail) > w.tailCap {
		tail = tail[len(tail)-w.tailCap:]
	}
	return joinCut(w.head, tail, w.total-int64(len(w.head))-int64(len(tail)))
}
