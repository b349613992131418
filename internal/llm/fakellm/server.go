// Package fakellm is a scripted OpenAI-compatible chat-completions server for
// tests. It is as strict as the real service about conversations, answers per
// agent (the X-Agentteam-Agent header), and records what it saw.
package fakellm

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/llm/openaiwire"
)

// AgentHeader names the agent making a request.
const AgentHeader = "X-Agentteam-Agent"

// Server is a running fake model server.
type Server struct {
	script       Script
	apiKey       string
	defaultAgent string

	srv    *httptest.Server
	closed chan struct{} // ends pending delays on Close
	once   sync.Once

	// Server-wide playbacks (playback.go).
	refuseStreamOptions StreamOptionsStyle
	nineCharIDs         bool
	reasoningBack       bool
	signatures          bool
	// Azure OpenAI's deployment URL (azure.go).
	azureDeployment, azureVersion string

	mu         sync.Mutex
	calls      []Call
	perAgent   map[string]int
	inFlight   int
	flights    []flightEvent
	violations []string
}

// Option configures a Server.
type Option func(*Server)

// WithAPIKey makes the server require "Authorization: Bearer key" (401 otherwise).
func WithAPIKey(key string) Option {
	return func(s *Server) { s.apiKey = key }
}

// WithDefaultAgent names requests that carry no agent header, instead of
// refusing them as a violation.
func WithDefaultAgent(name string) Option {
	return func(s *Server) { s.defaultAgent = name }
}

// New starts a server on 127.0.0.1 that answers with script.
func New(script Script, opts ...Option) *Server {
	s := &Server{script: script, closed: make(chan struct{}), perAgent: map[string]int{}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	if s.azureDeployment != "" {
		mux.HandleFunc(s.azurePath()+"/chat/completions", s.serveCompletion)
	} else {
		mux.HandleFunc("/v1/chat/completions", s.serveCompletion)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		openaiwire.WriteError(w, http.StatusNotFound, openaiwire.TypeInvalidRequest, "unknown_url",
			fmt.Sprintf("Unknown request URL: %s %s", r.Method, r.URL.Path))
	})
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is the base URL for go-openai's ClientConfig.BaseURL (ends in /v1;
// for an Azure deployment, the deployment's URL without its api-version).
func (s *Server) URL() string {
	if s.azureDeployment != "" {
		return s.srv.URL + s.azurePath()
	}
	return s.srv.URL + "/v1"
}

// Close ends pending delays and shuts the server down, waiting for handlers.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.srv.Close()
	})
}

func (s *Server) serveCompletion(w http.ResponseWriter, r *http.Request) {
	if s.azureDeployment != "" {
		if status, body := s.azureRefusal(r); status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return
		}
	} else if s.apiKey != "" && !s.authorized(r) {
		openaiwire.WriteError(w, http.StatusUnauthorized, openaiwire.TypeInvalidRequest, "invalid_api_key",
			"Incorrect API key provided.")
		return
	}
	agent := r.Header.Get(AgentHeader)
	if agent == "" {
		agent = s.defaultAgent
	}
	s.begin(agent)
	held := &holdLast{ResponseWriter: w}
	defer func() {
		// Ended before the client can read the answer's last byte, so a
		// client that has its whole answer never sees it still in flight.
		s.end(agent)
		_ = held.release()
	}()
	w = held

	req, body, err := openaiwire.ReadRequest(r)
	if err != nil && (r.Context().Err() != nil || errors.Is(err, io.ErrUnexpectedEOF)) {
		return // the client went away mid-request (e.g. killed): not a protocol fault
	}
	if err == nil && agent == "" {
		err = fmt.Errorf("missing %s header", AgentHeader)
	}
	if err == nil {
		err = openaiwire.ValidateRequest(req)
	}
	if err != nil {
		s.violation(fmt.Sprintf("%s: %v", agentLabel(agent), err))
		openaiwire.WriteError(w, http.StatusBadRequest, openaiwire.TypeInvalidRequest, "", err.Error())
		return
	}
	call := s.record(Call{Agent: agent, Req: req, Stream: req.Stream, Header: r.Header.Clone()})
	var reply Reply
	if refused := s.refusal(req, body); refused != nil {
		reply = *refused // the real server refuses before the model sees anything
	} else {
		reply = s.script(call)
	}
	if !s.wait(r.Context(), reply.Delay) {
		return
	}
	if reply.holdsOpen() {
		held.direct = true // the answer never ends: hold nothing back
	}
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	go func() {
		select {
		case <-s.closed:
			stop()
		case <-ctx.Done():
		}
	}()
	s.answer(ctx, w, call, reply)
}

func (s *Server) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && keyIs(got, s.apiKey)
}

func keyIs(got, key string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(key)) == 1
}

// wait sleeps for d unless the request or the server ends first.
func (s *Server) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-s.closed:
		return false
	}
}

func (s *Server) answer(ctx context.Context, w http.ResponseWriter, call Call, reply Reply) {
	if reply.RetryAfter != "" {
		w.Header().Set("Retry-After", reply.RetryAfter)
	}
	switch {
	case reply.Body != "":
		ct := reply.ContentType
		if ct == "" {
			ct = "text/html; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(orDefault(reply.Status, http.StatusOK))
		_, _ = w.Write([]byte(reply.Body))
		return
	case reply.Status >= 400:
		msg := reply.Content
		if msg == "" {
			msg = http.StatusText(reply.Status)
		}
		openaiwire.WriteError(w, reply.Status, openaiwire.ErrorTypeFor(reply.Status), errorCode(reply.Status), msg)
		return
	}
	c := completion(call, reply)
	if call.Stream && reply.EmptyWhenStreamed {
		c.Content, c.ToolCalls, c.Reasoning = "", nil, ""
	}
	q := reply.quirks()
	if !call.Stream {
		if reply.DropMidStream {
			b := []byte(fmt.Sprintf(`{"id":%q,"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"`, c.ID))
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(b)
			abort(w)
		}
		_ = openaiwire.WriteJSONQuirks(w, c, q)
		return
	}
	opts := openaiwire.StreamOptions{
		IncludeUsage:    call.Req.StreamOptions != nil && call.Req.StreamOptions.IncludeUsage,
		RepeatIndexZero: reply.RepeatIndexZero,
		IDsInEveryChunk: reply.IDsInEveryChunk,
		PieceSize:       5,
		Quirks:          q,
	}
	if reply.DropMidStream {
		opts.StopAfter = 2
	}
	if err := openaiwire.WriteStream(ctx, w, c, opts); errors.Is(err, openaiwire.ErrStopped) {
		abort(w)
	}
}

// abort cuts the connection mid-answer, as a crashing proxy would.
func abort(w http.ResponseWriter) {
	if h, ok := w.(*holdLast); ok {
		_ = h.release() // what was written goes out before the cut, as it did unheld
	}
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	panic(http.ErrAbortHandler)
}

func completion(call Call, reply Reply) openaiwire.Completion {
	c := openaiwire.Completion{
		ID:        fmt.Sprintf("chatcmpl-fake-%s-%d", call.Agent, call.N),
		Model:     call.Req.Model,
		Content:   reply.Content,
		Reasoning: reply.Reasoning,
	}
	if reply.ToolCallsAsText {
		c.Content += toolCallsText(reply.ToolCalls)
		reply.ToolCalls = nil
	}
	if reply.ThoughtSignatures && len(reply.ToolCalls) > 0 {
		c.Signatures = []string{thoughtSignature(call)} // Gemini signs the first call of a turn
	}
	for i, tc := range reply.ToolCalls {
		id := tc.ID
		if id == "" {
			id = fmt.Sprintf("call_%s_%d_%d", call.Agent, call.N, i)
		}
		c.ToolCalls = append(c.ToolCalls, openai.ToolCall{ID: id, Type: openai.ToolTypeFunction,
			Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Args}})
	}
	if reply.Usage != nil {
		c.Usage = *reply.Usage
	} else {
		c.Usage = openaiwire.EstimateUsage(call.Req, c.Content, c.ToolCalls)
	}
	return c
}

func errorCode(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case http.StatusUnauthorized:
		return "invalid_api_key"
	}
	return ""
}

func orDefault(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

func agentLabel(agent string) string {
	if agent == "" {
		return "(no agent)"
	}
	return agent
}
