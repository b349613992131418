package fakellm

import "net/http"

// holdLast passes writes on one call late: the latest write is kept back
// until the next one, or until release. The handler releases it only after
// counting the request as ended, so no byte of a finished answer reaches the
// client while the request still counts as in flight.
type holdLast struct {
	http.ResponseWriter
	held   []byte
	direct bool // pass writes on at once (an answer that never ends)
}

func (h *holdLast) Write(p []byte) (int, error) {
	if h.direct {
		if err := h.release(); err != nil {
			return 0, err
		}
		return h.ResponseWriter.Write(p)
	}
	if err := h.release(); err != nil {
		return 0, err
	}
	h.held = append(h.held, p...)
	return len(p), nil
}

// Flush sends what was passed on; the held write stays back.
func (h *holdLast) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// release passes the held write on.
func (h *holdLast) release() error {
	if len(h.held) == 0 {
		return nil
	}
	_, err := h.ResponseWriter.Write(h.held)
	h.held = h.held[:0]
	return err
}
