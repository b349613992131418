package llm

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultIdleTimeout is how long a reply may go without a byte before the
// request is given up and retried.
const DefaultIdleTimeout = 120 * time.Second

// defaultBaseURL is OpenAI's, used when ClientConfig names none.
const defaultBaseURL = "https://api.openai.com/v1"

// ClientConfig says how to reach an OpenAI-compatible chat-completions server.
type ClientConfig struct {
	BaseURL, APIKey, Model string
	// HTTPClient nil → a default with sane timeouts; --demo passes an in-process client.
	HTTPClient *http.Client
	// Stream uses server-sent events (with usage in the last chunk).
	Stream bool
	// Headers are extra HTTP headers sent with every request (OpenRouter's
	// HTTP-Referer, a proxy's routing header).
	Headers map[string]string
	// ReasoningEffort, when set, is sent as reasoning_effort ("low", "high"…).
	ReasoningEffort string
	// KeyEnv names the variable the key came from, for the sentence a
	// refused key gets (default OPENAI_API_KEY).
	KeyEnv string
	// KeyHeader, when set, carries the key as it is (Azure's "api-key")
	// instead of Authorization: Bearer.
	KeyHeader string
	// Query is added to every request's URL (Azure's api-version).
	Query map[string]string
	// MaxOutputTokens, when > 0, bounds each reply (the request's max_tokens,
	// or max_completion_tokens for a server that refuses max_tokens).
	MaxOutputTokens int
	// IdleTimeout bounds the wait for the next byte of a reply (default
	// DefaultIdleTimeout); a reply that stalls longer is retried.
	IdleTimeout time.Duration
	// MaxRetries bounds retries of one Complete call: 0 means 5, negative none.
	MaxRetries int
	// BaseDelay and MaxDelay shape the backoff (defaults 500ms, 20s).
	BaseDelay, MaxDelay time.Duration
	// OnRetry is called before each wait, for progress lines and the TUI.
	OnRetry func(Retry)
	// MaxCallArgs and MaxReplyText bound one tool call's arguments and a
	// reply's text, in bytes (0: DefaultMaxCallArgs, DefaultMaxReplyText).
	MaxCallArgs, MaxReplyText int
}

// Request is one model turn.
type Request struct {
	Agent    string
	Messages []openai.ChatCompletionMessage
	Tools    []openai.Tool
	OnDelta  func(Delta)
}

// Delta is a piece of a streaming reply.
type Delta struct {
	Agent, Content string
	// Reasoning is a piece of the model's thinking, shown apart from the reply.
	Reasoning string
	// ToolName is set when a tool call starts.
	ToolName string
	// Restart means the stream broke off and is being retried: discard the
	// text shown so far for this reply.
	Restart bool
}

// Response is the assistant's message for one turn.
type Response struct {
	Message      openai.ChatCompletionMessage
	Usage        openai.Usage
	FinishReason string
	// Cut, when set, is the bound the reply passed: it was read no further
	// and none of its tool calls may run.
	Cut        *ReplyCut
	signatures []string // Gemini's thought signature per tool call ("" none)
}

// Model answers one turn of a conversation.
type Model interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Client is the Model backed by a real server. It is safe for concurrent use.
type Client struct {
	hc        *http.Client
	url       string // …/chat/completions
	key       string
	keyEnv    string
	keyHeader string
	headers   map[string]string
	effort    string
	model     string
	stream    bool
	maxOutput int
	idle      time.Duration
	bounds    bounds
	// graces of a stream after its finish chunk (see streamReader).
	usageGrace, doneGrace time.Duration
	policy                *retryPolicy
	// noStreamOptions: the server refused stream_options once; never send it again.
	noStreamOptions atomic.Bool
	// completionTokens: the server refused max_tokens for max_completion_tokens
	// (OpenAI's reasoning models); send that from now on.
	completionTokens atomic.Bool
	// sigs are Gemini's thought signatures by tool call id; signing: send
	// them back (signatures.go).
	sigs    sync.Map
	signing atomic.Bool
}

// NewClient builds a Client; the API key goes only into the Authorization
// header (or the one KeyHeader names).
func NewClient(cfg ClientConfig) *Client {
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 5
	}
	if cfg.BaseDelay <= 0 {
		cfg.BaseDelay = 500 * time.Millisecond
	}
	if cfg.MaxDelay <= 0 {
		cfg.MaxDelay = 20 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = defaultBaseURL
	}
	policy := &retryPolicy{
		maxRetries: max(cfg.MaxRetries, 0),
		baseDelay:  cfg.BaseDelay,
		maxDelay:   cfg.MaxDelay,
		onRetry:    cfg.OnRetry,
		sleep:      sleepCtx,
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: defaultTransport()}
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	wrapped := *hc
	wrapped.Transport = &retryTransport{base: base, policy: policy}
	if cfg.KeyEnv == "" {
		cfg.KeyEnv = "OPENAI_API_KEY"
	}
	return &Client{
		hc: &wrapped, url: completionsURL(cfg.BaseURL, cfg.Query),
		key: cfg.APIKey, keyEnv: cfg.KeyEnv, keyHeader: cfg.KeyHeader, effort: cfg.ReasoningEffort,
		headers: cfg.Headers, model: cfg.Model, stream: cfg.Stream, maxOutput: cfg.MaxOutputTokens,
		idle: cfg.IdleTimeout, bounds: bounds{cfg.MaxCallArgs, cfg.MaxReplyText}.orDefaults(), usageGrace: time.Second, doneGrace: 250 * time.Millisecond, policy: policy,
	}
}

// completionsURL is base's /chat/completions, with query added to what
// base already asks (a base URL may carry ?api-version=…).
func completionsURL(base string, query map[string]string) string {
	u, err := url.Parse(base)
	if err != nil {
		return strings.TrimSuffix(base, "/") + "/chat/completions" // the request reports the bad URL
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/chat/completions"
	u.RawPath = ""
	if len(query) > 0 {
		q := u.Query()
		for k, v := range query {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// defaultTransport has no overall timeout (replies stream for minutes) but
// bounds each phase that should be quick.
func defaultTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   15 * time.Second,
		ResponseHeaderTimeout: 10 * time.Minute,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConnsPerHost:   16,
		ForceAttemptHTTP2:     true,
		// A request carries every tool's schema (tens of KB): with the
		// default 4 KiB buffer it left in three or four writes, each one
		// a trip through the kernel's network stack; this sends most in one.
		WriteBufferSize: 64 << 10,
	}
}

// Complete sends one turn, retrying transient failures within one budget.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	st := &callState{agent: req.Agent}
	ctx = withCallState(ctx, st)
	for {
		resp, err := c.once(ctx, req)
		retry, again := retryOf(err)
		if !again {
			return resp, err
		}
		if !c.policy.canRetry(st) {
			return Response{}, fmt.Errorf("giving up after %d retries: %w", c.policy.maxRetries, err)
		}
		if req.OnDelta != nil {
			req.OnDelta(Delta{Agent: req.Agent, Restart: true})
		}
		if werr := c.policy.wait(ctx, st, 0, retry); werr != nil {
			return Response{}, werr
		}
	}
}

// retryOf says whether a failed attempt is worth another: a stream that
// broke off or fell silent, or an error inside an answer whose code says
// the server is busy or failing (OpenRouter's mid-stream 502).
func retryOf(err error) (Retry, bool) {
	var drop *streamDropError
	if errors.As(err, &drop) {
		return netRetry(err), true
	}
	var inBand *apiError
	if errors.As(err, &inBand) && inBand.Status < 300 && !isContextLength(inBand) {
		if code := inBand.codeStatus(); retryableStatus(code) {
			return statusRetry(code, err), true
		}
	}
	return Retry{}, false
}

// once makes one turn: an attempt, and the second attempts some servers need.
func (c *Client) once(ctx context.Context, req Request) (Response, error) {
	withOptions := c.stream && !c.noStreamOptions.Load()
	resp, err := c.attempt(ctx, req, c.stream, withOptions)
	if withOptions && refusesStreamOptions(err) {
		// Groq and Mistral refuse the field: ask again without it, and never send it again.
		c.noStreamOptions.Store(true)
		resp, err = c.attempt(ctx, req, true, false)
	}
	if c.maxOutput > 0 && !c.completionTokens.Load() && refusesMaxTokens(err) {
		c.completionTokens.Store(true)
		resp, err = c.attempt(ctx, req, c.stream, c.stream && !c.noStreamOptions.Load())
	}
	if !c.signing.Load() && refusesMissingSignature(err) {
		// Gemini wants signatures we never saw (a resumed conversation): send its sentinel.
		c.signing.Store(true)
		resp, err = c.attempt(ctx, req, c.stream, c.stream && !c.noStreamOptions.Load())
	}
	if c.stream && err == nil && emptyReply(resp) {
		// Ollama drops streamed tool calls for some models: ask once more, unstreamed.
		resp, err = c.attempt(ctx, req, false, false)
	}
	if err != nil {
		return Response{}, c.nameKey(classifyAttempt(err))
	}
	if !c.stream && req.OnDelta != nil && resp.Message.ReasoningContent != "" {
		// A whole answer streams nothing: its thinking is shown all at once.
		req.OnDelta(Delta{Agent: req.Agent, Reasoning: resp.Message.ReasoningContent})
	}
	if len(resp.Message.ToolCalls) == 0 {
		textToolCalls(&resp, req.Tools)
	}
	tidyCalls(resp.Message.ToolCalls)
	c.keepSignatures(resp)
	resp.signatures = nil
	return resp, nil
}

// nameKey makes a refused key's sentence name the variable it came from.
func (c *Client) nameKey(err error) error {
	var auth *authError
	if errors.As(err, &auth) {
		auth.keyEnv = c.keyEnv
	}
	return err
}

// classifyAttempt keeps the errors Complete retries as they are.
func classifyAttempt(err error) error {
	if _, again := retryOf(err); again {
		var drop *streamDropError
		if errors.As(err, &drop) {
			return err
		}
		return &retryableAPIError{err: classify(err), cause: err}
	}
	return classify(err)
}

// retryableAPIError keeps a retryable in-band error's sentence and its cause.
type retryableAPIError struct {
	err   error
	cause error
}

func (e *retryableAPIError) Error() string { return e.err.Error() }
func (e *retryableAPIError) Unwrap() error { return e.cause }

func refusesStreamOptions(err error) bool {
	var e *apiError
	return errors.As(err, &e) && (e.Status == http.StatusBadRequest || e.Status == http.StatusUnprocessableEntity) &&
		strings.Contains(e.Message, "stream_options")
}

// refusesMaxTokens: OpenAI's answer to max_tokens for a reasoning model
// ("Use 'max_completion_tokens' instead").
func refusesMaxTokens(err error) bool {
	var e *apiError
	return errors.As(err, &e) && e.Status == http.StatusBadRequest &&
		strings.Contains(e.Message, "max_tokens") && strings.Contains(e.Message, "max_completion_tokens")
}

// emptyReply: nothing at all, yet a clean stop.
func emptyReply(r Response) bool {
	return strings.TrimSpace(r.Message.Content) == "" && len(r.Message.ToolCalls) == 0 &&
		(r.FinishReason == "" || r.FinishReason == string(openai.FinishReasonStop))
}

// attempt is one HTTP request and the reading of its answer.
func (c *Client) attempt(ctx context.Context, req Request, stream, withOptions bool) (Response, error) {
	creq := openai.ChatCompletionRequest{Model: c.model, Messages: reasoningOnCalls(req.Messages), Tools: req.Tools, Stream: stream,
		ReasoningEffort: c.effort}
	if c.completionTokens.Load() {
		creq.MaxCompletionTokens = c.maxOutput
	} else {
		//lint:ignore SA1019 max_tokens is the field every OpenAI-compatible server knows; OpenAI's refusal switches to the new one
		creq.MaxTokens = c.maxOutput
	}
	if withOptions {
		creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	var body []byte
	var err error
	if c.signing.Load() {
		body, err = c.signedBody(creq)
	} else {
		body, err = encodeRequest(creq)
	}
	if err != nil {
		return Response{}, fmt.Errorf("encoding the request: %w", err)
	}
	actx, cancel := context.WithCancel(ctx)
	defer cancel()
	hreq, err := http.NewRequestWithContext(actx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	for k, v := range c.headers {
		hreq.Header.Set(k, v)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if c.keyHeader != "" {
		hreq.Header.Set(c.keyHeader, c.key)
	} else {
		hreq.Header.Set("Authorization", "Bearer "+c.key)
	}
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
		hreq.Header.Set("Cache-Control", "no-cache")
	}
	hresp, err := c.hc.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		return Response{}, err
	}
	defer hresp.Body.Close()
	dog := newWatchdog(c.idle, cancel)
	defer dog.timer.Stop()
	r := &idleReader{r: hresp.Body, dog: dog, allow: c.idle}
	if hresp.StatusCode >= 300 {
		b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
		if e, ok := parseErrorBody(hresp.StatusCode, b); ok {
			return Response{}, e
		}
		return Response{}, &apiError{Status: hresp.StatusCode, Message: snippet(string(b))}
	}
	if stream {
		br := readers.Get().(*bufio.Reader)
		br.Reset(r)
		defer func() { br.Reset(nil); readers.Put(br) }()
		sr := &streamReader{br: br, body: r, asm: newAssembler(req.Agent, req.OnDelta, c.bounds), maxLine: c.bounds.line(),
			wantUsage: withOptions, usageGrace: c.usageGrace, doneGrace: c.doneGrace}
		resp, err := sr.read(ctx)
		if err != nil && ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		return resp, err
	}
	b, err := io.ReadAll(io.LimitReader(r, int64(c.bounds.line())+1))
	switch {
	case len(b) > c.bounds.line():
		return cutWhole(c.bounds.line()), nil
	case ctx.Err() != nil:
		return Response{}, ctx.Err()
	case dog.fired.Load():
		return Response{}, &streamDropError{err: &idleTimeoutError{d: c.idle}}
	case err != nil:
		return Response{}, &streamDropError{err: err} // cut off mid-answer
	}
	return decodeWhole(b)
}

// readers are the stream readers' buffers: a fresh 32 KiB per turn was a
// good part of what each turn allocated. Nothing read from one outlives
// its turn (the reader copies what it keeps).
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 32<<10) }}

// reasoningOnCalls keeps the reasoning of assistant turns that called
// tools, which DeepSeek wants back ("Missing reasoning_content field"), and
// drops the rest from the request: no server needs it, and it is long.
// The session keeps it all.
func reasoningOnCalls(msgs []openai.ChatCompletionMessage) []openai.ChatCompletionMessage {
	var out []openai.ChatCompletionMessage
	for i, m := range msgs {
		if m.ReasoningContent == "" || len(m.ToolCalls) > 0 {
			continue
		}
		if out == nil {
			out = append([]openai.ChatCompletionMessage(nil), msgs...)
		}
		out[i].ReasoningContent = ""
	}
	if out == nil {
		return msgs
	}
	return out
}

// tidyCalls makes tool calls fit to send back: an id each (made up as 9
// letters and digits, the one form every server accepts), no chunk index,
// arguments that are at least an empty object.
func tidyCalls(calls []openai.ToolCall) {
	for i := range calls {
		tc := &calls[i]
		tc.Index = nil
		if tc.ID == "" {
			tc.ID = NewCallID()
		}
		if tc.Type == "" {
			tc.Type = openai.ToolTypeFunction
		}
		if tc.Function.Arguments == "" {
			tc.Function.Arguments = "{}"
		}
	}
}
