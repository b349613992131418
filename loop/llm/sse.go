package llm

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
	maxLine               int    // bound on one line, and on one event's data
	// data holds the data lines of an event whose JSON is not whole yet,
	// joined with "\n" as the SSE spec joins them.
	data     []byte
	chunks   int
	finished bool
}

// read returns the assembled reply, or an error: a drop (*streamDropError)
// or one that will repeat.
//
// An event is dispatched as soon as its data is a whole JSON value, not
// only at the blank line that ends it: a server that never sends blank
// lines is read, and the finish chunk of one that holds the connection
// open counts at once. The data of one event may come in several data:
// lines (joined with "\n", per the SSE spec).
func (s *streamReader) read(ctx context.Context) (Response, error) {
	if c := firstByte(s.br); c == '{' || c == '[' {
		return s.wholeBody() // a JSON body where a stream was asked for
	}
	var (
		event []byte
		junk  []byte // lines that are not SSE: perhaps an error body
	)
	for {
		line, err := s.line()
		if errors.Is(err, errLineTooLong) || len(s.data)+len(line) > s.maxLine {
			s.asm.cut = &ReplyCut{What: "one event of its stream", Bound: s.maxLine}
			return s.asm.response(), nil
		}
		line = bytes.TrimSpace(line)
		switch {
		case len(line) == 0: // the end of an event
			if len(s.data) > 0 {
				if done, _, herr := s.handle(s.data, string(event), true); done || herr != nil || s.asm.cut != nil {
					return s.result(herr)
				}
			}
			s.data, event = s.data[:0], event[:0]
		case line[0] == ':': // keep-alive comments do not count
		case bytes.HasPrefix(line, []byte("data:")):
			payload := bytes.TrimSpace(line[5:])
			if len(s.data) > 0 {
				payload = append(append(s.data, '\n'), payload...)
			} else if len(payload) == 0 {
				break // an empty data line is no event
			}
			done, more, herr := s.handle(payload, string(event), false)
			if done || herr != nil || s.asm.cut != nil {
				return s.result(herr)
			}
			switch {
			case !more:
				s.data = s.data[:0]
			case len(s.data) == 0: // payload is still the reader's buffer
				s.data = append(s.data, payload...)
			default:
				s.data = payload
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
		if len(s.data) > 0 && errors.Is(err, io.EOF) {
			// The stream ended inside an event: its data is all there is.
			data := s.data
			s.data = nil
			if done, _, herr := s.handle(data, string(event), true); done || herr != nil || s.asm.cut != nil {
				return s.result(herr)
			}
		}
		switch {
		case s.finished && (errors.Is(err, io.EOF) || s.body.dog.fired.Load()):
			return s.asm.response(), nil // whole, without [DONE]
		case s.body.dog.fired.Load():
			return Response{}, &streamDropError{err: &idleTimeoutError{d: s.body.allow}}
		case ctx.Err() != nil:
			return Response{}, ctx.Err()
		case !errors.Is(err, io.EOF):
			return Response{}, &streamDropError{err: err}
		case s.chunks == 0 && len(junk) > 0:
			if e, ok := parseErrorBody(200, junk); ok {
				return Response{}, e
			}
			return Response{}, &decodeError{err: errors.New("not a server-sent event stream"), what: string(junk)}
		case s.chunks == 0:
			return Response{}, &streamDropError{err: io.ErrUnexpectedEOF} // closed before saying anything
		}
		return Response{}, &streamDropError{err: errors.New("the stream ended before the reply did (no finish_reason, no [DONE])")}
	}
}

// result is the reply once the stream has ended it, or err.
func (s *streamReader) result(err error) (Response, error) {
	if err != nil {
		return Response{}, err
	}
	return s.asm.response(), nil
}

// handle reads one event's data: done at [DONE]; more when the data is
// JSON cut short and the event may go on (whole is false); an error for
// an error event or chunk, or data that cannot be read.
func (s *streamReader) handle(payload []byte, event string, whole bool) (done, more bool, err error) {
	if bytes.Equal(payload, []byte("[DONE]")) {
		return true, false, nil
	}
	if event == "error" {
		if !whole {
			return false, true, nil // the error's text may go on; it ends with the event
		}
		return false, false, errorIn(payload)
	}
	var ch wireChunk
	if jerr := decodeChunk(payload, &ch); jerr != nil {
		if !whole && cutShort(jerr, payload) {
			return false, true, nil
		}
		return false, false, &decodeError{err: jerr, what: string(payload)}
	}
	if ch.isError() {
		return false, false, errorIn(payload)
	}
	s.chunks++
	s.asm.add(&ch)
	if finish := s.asm.finish; finish == "error" {
		return false, false, &apiError{Status: 200, Message: "the reply ended with finish_reason \"error\" and no explanation"}
	} else if finish != "" {
		wait := s.doneGrace
		if s.wantUsage && !s.asm.gotUsage {
			wait = s.usageGrace
		}
		if !s.finished || wait != s.body.allow {
			s.body.setAllow(wait)
		}
		s.finished = true
	}
	return false, false, nil
}

// cutShort: the JSON error is only that the text ended before the value did.
func cutShort(err error, payload []byte) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) && se.Offset == int64(len(payload)) && se.Error() == "unexpected end of JSON input"
}

// errLineTooLong is a line past the stream's bound; it was not read whole.
var errLineTooLong = errors.New("a line of the stream passed its bound")

// line returns the next line up to maxLine bytes, and the read error after it.
func (s *streamReader) line() ([]byte, error) {
	line, err := s.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, err
	}
	s.long = append(s.long[:0], line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(s.long) > s.maxLine {
			return nil, errLineTooLong
		}
		line, err = s.br.ReadSlice('\n')
		s.long = append(s.long, line...)
	}
	return s.long, err
}

// wholeBody reads a JSON body sent instead of a stream: an error (HTTP 200
// with an error object), or a whole answer from a server that ignored stream.
func (s *streamReader) wholeBody() (Response, error) {
	b, err := io.ReadAll(io.LimitReader(s.br, int64(s.maxLine)+1))
	if len(b) > s.maxLine {
		return cutWhole(s.maxLine), nil
	}
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

// cutWhole is a whole (unstreamed) answer past its bound: none of it is read.
func cutWhole(bound int) Response {
	return Response{Cut: &ReplyCut{What: "its whole answer", Bound: bound}, FinishReason: "cut"}
}
