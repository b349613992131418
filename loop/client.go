// Package loop is one ReAct loop for any agent, lead or teammate, and the
// model client under it (go-openai, retries, streaming).
package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ClientConfig says how to reach an OpenAI-compatible chat-completions server.
type ClientConfig struct {
	BaseURL, APIKey, Model string
	// HTTPClient nil → a default with sane timeouts; --demo passes an in-process client.
	HTTPClient *http.Client
	// Stream uses server-sent events (with usage in the last chunk).
	Stream bool
	// MaxRetries bounds retries of one Complete call: 0 means 5, negative none.
	MaxRetries int
	// BaseDelay and MaxDelay shape the backoff (defaults 500ms, 20s).
	BaseDelay, MaxDelay time.Duration
	// OnRetry is called before each wait, for progress lines and the TUI.
	OnRetry func(Retry)
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
}

// Model answers one turn of a conversation.
type Model interface {
	Complete(ctx context.Context, req Request) (Response, error)
}

// Client is the Model backed by a real server. It is safe for concurrent use.
type Client struct {
	api    *openai.Client
	model  string
	stream bool
	policy *retryPolicy
}

// NewClient builds a Client; the API key goes only into the Authorization header.
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

	oc := openai.DefaultConfig(cfg.APIKey)
	if cfg.BaseURL != "" {
		oc.BaseURL = cfg.BaseURL
	}
	oc.HTTPClient = &wrapped
	return &Client{api: openai.NewClientWithConfig(oc), model: cfg.Model, stream: cfg.Stream, policy: policy}
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
	}
}

// Complete sends one turn, retrying transient failures within one budget.
func (c *Client) Complete(ctx context.Context, req Request) (Response, error) {
	st := &callState{agent: req.Agent}
	ctx = withCallState(ctx, st)
	for {
		resp, err := c.once(ctx, req)
		var drop *streamDropError
		if err == nil || !errors.As(err, &drop) {
			return resp, err
		}
		if !c.policy.canRetry(st) {
			return Response{}, fmt.Errorf("giving up after %d retries: %w", c.policy.maxRetries, err)
		}
		if req.OnDelta != nil {
			req.OnDelta(Delta{Agent: req.Agent, Restart: true})
		}
		if werr := c.policy.wait(ctx, st, 0, netRetry(err)); werr != nil {
			return Response{}, werr
		}
	}
}

func (c *Client) once(ctx context.Context, req Request) (Response, error) {
	creq := openai.ChatCompletionRequest{Model: c.model, Messages: req.Messages, Tools: req.Tools}
	if c.stream {
		return c.streamOnce(ctx, req, creq)
	}
	out, err := c.api.CreateChatCompletion(ctx, creq)
	if err != nil {
		return Response{}, classify(err)
	}
	if len(out.Choices) == 0 {
		return Response{}, errors.New("the model server returned a reply with no choices")
	}
	ch := out.Choices[0]
	msg := ch.Message
	msg.Role = openai.ChatMessageRoleAssistant
	c.tidyCalls(msg.ToolCalls)
	return Response{Message: msg, Usage: out.Usage, FinishReason: string(ch.FinishReason)}, nil
}

func (c *Client) streamOnce(ctx context.Context, req Request, creq openai.ChatCompletionRequest) (Response, error) {
	creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	stream, err := c.api.CreateChatCompletionStream(ctx, creq)
	if err != nil {
		return Response{}, classify(err)
	}
	defer stream.Close()
	asm := newAssembler(req.Agent, req.OnDelta)
	for n := 0; ; n++ {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) && n == 0 {
			return Response{}, &streamDropError{err: io.ErrUnexpectedEOF} // closed before saying anything
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return Response{}, ctx.Err()
			}
			var apiErr *openai.APIError
			if errors.As(err, &apiErr) || errors.Is(err, openai.ErrTooManyEmptyStreamMessages) {
				return Response{}, classify(err)
			}
			return Response{}, &streamDropError{err: err}
		}
		asm.add(chunk)
	}
	resp := asm.response()
	c.tidyCalls(resp.Message.ToolCalls)
	return resp, nil
}

// tidyCalls makes tool calls fit to send back: an id each (made up as 9
// letters and digits, the one form every server accepts), no chunk index,
// arguments that are at least an empty object.
func (c *Client) tidyCalls(calls []openai.ToolCall) {
	for i := range calls {
		tc := &calls[i]
		tc.Index = nil
		if tc.ID == "" {
			tc.ID = newCallID()
		}
		if tc.Type == "" {
			tc.Type = openai.ToolTypeFunction
		}
		if tc.Function.Arguments == "" {
			tc.Function.Arguments = "{}"
		}
	}
}
