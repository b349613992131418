package loop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// Reading a streamed answer. go-openai's reader counts comment lines
// against a limit (servers send hundreds while a request waits in their
// queue) and waits for [DONE] (some servers never send it); this one skips
// comments, ends the turn at the finish chunk, and gives up on a server
// that falls silent.

// idleTimeoutError is a server that sent nothing for too long; Complete retries it.
type idleTimeoutError struct{ d time.Duration }

func (e *idleTimeoutError) Error() string {
	return fmt.Sprintf("the model server sent nothing for %s", e.d)
}
func (e *idleTimeoutError) Timeout() bool   { return true } // a net.Error, so the retry's cause is a timeout
func (e *idleTimeoutError) Temporary() bool { return true }

// decodeError is an answer agentteam cannot read; asking again would get the same.
type decodeError struct {
	err  error
	what string
}

func (e *decodeError) Error() string {
	return fmt.Sprintf("the model server's answer could not be read (%v): %s", e.err, snippet(e.what))
}
func (e *decodeError) Unwrap() error { return e.err }

// watchdog cancels an attempt when its reads wait longer than allowed.
type watchdog struct {
	timer *time.Timer
	fired atomic.Bool
}

func newWatchdog(d time.Duration, cancel context.CancelFunc) *watchdog {
	w := &watchdog{}
	w.timer = time.AfterFunc(d, func() {
		w.fired.Store(true)
		cancel()
	})
	return w
}

// idleReader re-arms the watchdog after every read that brought bytes.
type idleReader struct {
	r     io.Reader
	dog   *watchdog
	allow time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.dog.timer.Reset(r.allow)
	}
	return n, err
}

// setAllow changes how long the next wait may last, from now.
func (r *idleReader) setAllow(d time.Duration) {
	r.allow = d
	r.dog.timer.Reset(d)
}

// maxBody bounds a whole answer read into memory.
const maxBody = 64 << 20

// streamReader reads one SSE answer into an assembler.
type streamReader struct {
	br        *bufio.Reader
	body      *idleReader
	asm       *assembler
	wantUsage bool
	// graces: after the finish chunk, how long to wait for the usage chunk;
	// once the reply is whole, how long to wait for [DONE] (so that the
	// connection can be reused).
	usageGrace, doneGrace time.Duration
	long                  []byte // a line longer than the buffer
}

// read returns the assembled reply, or an error: a drop (*streamDropError)
// or one that will repeat.
func (s *streamReader) read(ctx context.Context) (Response, error) {
	if c := firstByte(s.br); c == '{' || c == '[' {
		return s.wholeBody() // a JSON body where a stream was asked for
	}
	var (
		chunks   int
		finished bool
		event    []byte
		junk     []byte // lines that are not SSE: perhaps an error body
	)
	for {
		line, err := s.line()
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0 || line[0] == ':': // keep-alive comments do not count
		case bytes.HasPrefix(line, []byte("data:")):
			payload := bytes.TrimSpace(line[5:])
			if bytes.Equal(payload, []byte("[DONE]")) {
				return s.asm.response(), nil
			}
			if string(event) == "error" {
				return Response{}, errorIn(payload)
			}
			var ch wireChunk
			if jerr := json.Unmarshal(payload, &ch); jerr != nil {
				return Response{}, &decodeError{err: jerr, what: string(payload)}
			}
			if ch.isError() {
				return Response{}, errorIn(payload)
			}
			chunks++
			s.asm.add(&ch)
			if finish := s.asm.finish; finish == "error" {
				return Response{}, &apiError{Status: 200, Message: "the reply ended with finish_reason \"error\" and no explanation"}
			} else if finish != "" {
				wait := s.doneGrace
				if s.wantUsage && !s.asm.gotUsage {
					wait = s.usageGrace
				}
				if !finished || wait != s.body.allow {
					s.body.setAllow(wait)
				}
				finished = true
			}
		case bytes.HasPrefix(line, []byte("event:")):
			event = append(event[:0], bytes.TrimSpace(line[6:])...)
		case bytes.HasPrefix(line, []byte("id:")) || bytes.HasPrefix(line, []byte("retry:")):
		default:
			if len(junk) < 64<<10 {
				junk = append(append(junk, line...), '\n')
			}
		}
		if err == nil {
			continue
		}
		switch {
		case finished && (errors.Is(err, io.EOF) || s.body.dog.fired.Load()):
			return s.asm.response(), nil // whole, without [DONE]
		case s.body.dog.fired.Load():
			return Response{}, &streamDropError{err: &idleTimeoutError{d: s.body.allow}}
		case ctx.Err() != nil:
			return Response{}, ctx.Err()
		case !errors.Is(err, io.EOF):
			return Response{}, &streamDropError{err: err}
		case chunks == 0 && len(junk) > 0:
			if e, ok := parseErrorBody(200, junk); ok {
				return Response{}, e
			}
			return Response{}, &decodeError{err: errors.New("not a server-sent event stream"), what: string(junk)}
		case chunks == 0:
			return Response{}, &streamDropError{err: io.ErrUnexpectedEOF} // closed before saying anything
		}
		return Response{}, &streamDropError{err: errors.New("the stream ended before the reply did (no finish_reason, no [DONE])")}
	}
}

// line returns the next line, however long, and the read error after it.
func (s *streamReader) line() ([]byte, error) {
	line, err := s.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	s.long = append(s.long[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = s.br.ReadSlice('\n')
		s.long = append(s.long, line...)
	}
	return s.long, err
}

// wholeBody reads a JSON body sent instead of a stream: an error (HTTP 200
// with an error object), or a whole answer from a server that ignored stream.
func (s *streamReader) wholeBody() (Response, error) {
	b, err := io.ReadAll(io.LimitReader(s.br, maxBody))
	if err != nil {
		if s.body.dog.fired.Load() {
			err = &idleTimeoutError{d: s.body.allow}
		}
		return Response{}, &streamDropError{err: err}
	}
	resp, err := decodeWhole(b)
	if err == nil {
		s.asm.emit(Delta{Content: resp.Message.Content})
	}
	return resp, err
}

// errorIn reads the error a stream chunk or event carries.
func errorIn(payload []byte) error {
	if e, ok := parseErrorBody(200, payload); ok {
		return e
	}
	return &apiError{Status: 200, Message: snippet(string(payload))}
}

// decodeWhole reads a whole (non-streaming) answer body.
func decodeWhole(b []byte) (Response, error) {
	var w wireResponse
	if err := json.Unmarshal(b, &w); err != nil || w.isError() {
		if e, ok := parseErrorBody(200, b); ok {
			return Response{}, e
		}
		if err == nil {
			err = errors.New("an error without a message")
		}
		return Response{}, &decodeError{err: err, what: string(b)}
	}
	if len(w.Choices) == 0 {
		return Response{}, &decodeError{err: errors.New("a reply with no choices"), what: string(b)}
	}
	ch := &w.Choices[0]
	resp := ch.Message.response()
	resp.FinishReason = ch.FinishReason
	if u := w.usage(); u != nil {
		resp.Usage = *u
	}
	return resp, nil
}
