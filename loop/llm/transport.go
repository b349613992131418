package llm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// AgentHeader names the agent a request is made for; the fake server and the
// demo model route by it.
const AgentHeader = "X-Agentteam-Agent"

type callStateKey struct{}

// callState is one Complete call: who asks, and the retry budget shared by
// the transport and stream restarts.
type callState struct {
	agent    string
	attempts atomic.Int32
}

func withCallState(ctx context.Context, st *callState) context.Context {
	return context.WithValue(ctx, callStateKey{}, st)
}

func callStateFrom(ctx context.Context) *callState {
	if st, ok := ctx.Value(callStateKey{}).(*callState); ok {
		return st
	}
	return &callState{}
}

// retryTransport tags requests with the agent and retries 429/5xx and
// connection errors, honouring Retry-After.
type retryTransport struct {
	base   http.RoundTripper
	policy *retryPolicy
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	st := callStateFrom(ctx)
	for try := 0; ; try++ {
		out := req.Clone(ctx)
		if st.agent != "" {
			out.Header.Set(AgentHeader, st.agent)
		}
		if try > 0 { // the first attempt sends (and the base closes) the original body
			if err := rewindBody(req, out); err != nil {
				return nil, err
			}
		}
		resp, err := t.base.RoundTrip(out)
		if err != nil {
			if ctx.Err() != nil || !retryableNetErr(err) || !t.policy.canRetry(st) || !replayable(req) {
				return nil, err
			}
			if refused(err) { // name the server, as the HTTP client's error would
				err = &url.Error{Op: req.Method, URL: req.URL.String(), Err: err}
			}
			if werr := t.policy.wait(ctx, st, 0, netRetry(err)); werr != nil {
				return nil, werr
			}
			continue
		}
		if retryableStatus(resp.StatusCode) && t.policy.canRetry(st) && replayable(req) && !repeatsError(resp) {
			after := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
			drain(resp.Body)
			cause := fmt.Errorf("HTTP %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
			if werr := t.policy.wait(ctx, st, after, statusRetry(resp.StatusCode, cause)); werr != nil {
				return nil, werr
			}
			continue
		}
		return checkBody(req, resp)
	}
}

// rewindBody gives each attempt a fresh copy of the request body.
func rewindBody(orig, out *http.Request) error {
	if orig.Body == nil || orig.Body == http.NoBody || orig.GetBody == nil {
		return nil
	}
	b, err := orig.GetBody()
	if err != nil {
		return fmt.Errorf("replaying the request body: %w", err)
	}
	out.Body = b
	return nil
}

func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

func retryableStatus(code int) bool {
	switch code {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// retryableNetErr: refused, reset, EOF before a response... but not a bad
// certificate, which no retry will fix.
func retryableNetErr(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	return !errors.As(err, &certErr) && !errors.As(err, &unknownAuth) && !errors.As(err, &hostErr)
}

// drain lets the connection be reused; bounded so a huge error page cannot stall us.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	_ = body.Close()
}

// checkBody refuses answers that are not API answers (HTML from a proxy...)
// before they are read as JSON. 401/403 pass: whatever the body, they mean
// the key. A stream is not peeked at: its first byte may be long in coming,
// and the reader bounds that wait.
func checkBody(req *http.Request, resp *http.Response) (*http.Response, error) {
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		return resp, nil
	}
	ct := resp.Header.Get("Content-Type")
	media, _, _ := mime.ParseMediaType(ct)
	stream := strings.Contains(req.Header.Get("Accept"), "text/event-stream")
	if media == "text/html" || media == "application/xhtml+xml" {
		drain(resp.Body)
		return nil, &badBodyError{Status: resp.StatusCode, ContentType: ct}
	}
	if stream && resp.StatusCode < 300 && media == "text/event-stream" {
		return resp, nil
	}
	br := bufio.NewReader(resp.Body)
	first := firstByte(br)
	ok := first == '{' || first == '['
	if stream && resp.StatusCode < 300 {
		ok = first != '<' // SSE without its content type; the reader checks the lines
	}
	if !ok {
		drain(resp.Body)
		return nil, &badBodyError{Status: resp.StatusCode, ContentType: ct}
	}
	resp.Body = readCloser{Reader: br, Closer: resp.Body}
	return resp, nil
}

// repeatsError: a 5xx answer whose body says the request itself is the
// problem (llama.cpp's exceed_context_size_error came as HTTP 500): asking
// again gets the same. The body is put back for the reader.
func repeatsError(resp *http.Response) bool {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(b), resp.Body), Closer: resp.Body}
	e, ok := parseErrorBody(resp.StatusCode, b)
	return ok && isContextLength(e)
}

// firstByte peeks at the first non-space byte without consuming anything; 0 if none.
func firstByte(br *bufio.Reader) byte {
	for n := 1; n <= 512; n++ {
		b, err := br.Peek(n)
		if len(b) < n {
			return 0
		}
		c := b[n-1]
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			return c
		}
		if err != nil {
			return 0
		}
	}
	return 0
}

type readCloser struct {
	io.Reader
	io.Closer
}
