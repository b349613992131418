// Package mcp gives agents the tools of the person's MCP servers: each
// server configured in [mcp.servers.NAME] is started once per process (a
// command spoken to over stdio, or a streamable HTTP URL), and each of its
// tools becomes a tool named mcp__SERVER__TOOL with the server's own schema.
//
//   - A stdio server runs as the person, with an environment built from the
//     commands' allowlist plus the variables its env names: never the model
//     key nor a token it was not given.
//   - Every call has a deadline; a server that dies or hangs is one error
//     result for the model, and the next call starts it again (after a
//     backoff).
//   - Results come back as text: text content as it is, structured content
//     as JSON, images and audio described, resource links by address.
//   - A tool the server marks readOnlyHint is a read to the permission gate;
//     every other is asked about as a command is.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentteam/agentteam/internal/sys/sandbox"
	"github.com/agentteam/agentteam/tools"
)

// Server is one configured MCP server.
type Server struct {
	Name string
	// Command and Args start a stdio server; URL names a streamable HTTP one.
	Command string
	Args    []string
	URL     string
	// Env names variables of agentteam's environment the server gets
	// besides the commands' allowlist; Headers are HTTP headers whose
	// values are read from the named variables (never written in a file).
	Env     []string
	Headers map[string]string
	// Roles and Agents say who gets its tools: empty both, every agent.
	Roles, Agents []string
	// StartTimeout bounds a start and its tool listing; CallTimeout one call.
	StartTimeout, CallTimeout time.Duration
}

// Defaults for a Server's timeouts left zero.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 2 * time.Minute
)

// For reports whether agent of role gets the server's tools.
func (s Server) For(agent, role string) bool {
	if len(s.Roles) == 0 && len(s.Agents) == 0 {
		return true
	}
	for _, r := range s.Roles {
		if strings.EqualFold(r, role) {
			return true
		}
	}
	for _, a := range s.Agents {
		if a == agent {
			return true
		}
	}
	return false
}

// Manager runs a process's MCP servers, shared by its agents.
type Manager struct {
	getenv func(string) string
	mu     sync.Mutex
	conns  map[string]*conn
}

// conn is one server and its session, started again when it was lost.
type conn struct {
	srv      Server
	mu       sync.Mutex
	session  *sdk.ClientSession
	tools    []*sdk.Tool
	failures int
	retryAt  time.Time
	lastErr  error
}

// Start starts every server and lists its tools. A server that does not
// start is not fatal: its error is in Status, and its tools are missing.
func Start(ctx context.Context, servers []Server, getenv func(string) string) *Manager {
	if getenv == nil {
		getenv = os.Getenv
	}
	m := &Manager{getenv: getenv, conns: map[string]*conn{}}
	var wg sync.WaitGroup
	for _, s := range servers {
		c := &conn{srv: s}
		m.conns[s.Name] = c
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.mu.Lock()
			defer c.mu.Unlock()
			c.lastErr = m.connect(ctx, c)
		}()
	}
	wg.Wait()
	return m
}

// Status is one server's state, for `agentteam mcp` and the TUI.
type Status struct {
	Name  string
	Tools []string
	Err   string // why it is not running, "" when it is
}

// Status lists the servers, by name.
func (m *Manager) Status() []Status {
	if m == nil {
		return nil
	}
	var out []Status
	for _, c := range m.sorted() {
		c.mu.Lock()
		st := Status{Name: c.srv.Name}
		for _, t := range c.tools {
			st.Tools = append(st.Tools, t.Name)
		}
		if c.lastErr != nil {
			st.Err = c.lastErr.Error()
		}
		c.mu.Unlock()
		out = append(out, st)
	}
	return out
}

func (m *Manager) sorted() []*conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]*conn, 0, len(m.conns))
	for _, c := range m.conns {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].srv.Name < out[j].srv.Name })
	return out
}

// Tools are the tools agent of role gets, at most cap bytes of output each.
func (m *Manager) Tools(agent, role string, cap int) []tools.Tool {
	if m == nil {
		return nil
	}
	var out []tools.Tool
	for _, c := range m.sorted() {
		if !c.srv.For(agent, role) {
			continue
		}
		c.mu.Lock()
		for _, t := range c.tools {
			out = append(out, &tool{c: c, m: m, def: t, name: ToolName(c.srv.Name, t.Name), cap: cap})
		}
		c.mu.Unlock()
	}
	return out
}

// Close stops every server.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	var errs []error
	for _, c := range m.sorted() {
		c.mu.Lock()
		if c.session != nil {
			errs = append(errs, c.session.Close())
			c.session = nil
		}
		c.mu.Unlock()
	}
	return errors.Join(errs...)
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// ToolName is the model's name of a server's tool: mcp__SERVER__TOOL, in the
// characters every model API takes, at most 64 of them.
func ToolName(server, name string) string {
	n := "mcp__" + unsafeName.ReplaceAllString(server, "_") + "__" + unsafeName.ReplaceAllString(name, "_")
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// IsToolName reports whether name is an MCP server's tool.
func IsToolName(name string) bool { return strings.HasPrefix(name, "mcp__") }

// connect starts c's server and lists its tools; c.mu is held.
func (m *Manager) connect(ctx context.Context, c *conn) error {
	d := c.srv.StartTimeout
	if d <= 0 {
		d = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var transport sdk.Transport
	switch {
	case c.srv.Command != "":
		cmd := exec.Command(c.srv.Command, c.srv.Args...)
		cmd.Env = m.env(c.srv.Env)
		cmd.Stderr = nil // the server's own log is not the person's
		cmd.SysProcAttr = serverProcAttr()
		transport = &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
	case c.srv.URL != "":
		hc := &http.Client{Transport: &headers{base: http.DefaultTransport, set: m.headers(c.srv.Headers)}}
		transport = &sdk.StreamableClientTransport{Endpoint: c.srv.URL, HTTPClient: hc}
	default:
		return fmt.Errorf("MCP server %s has neither a command nor a url", c.srv.Name)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "agentteam", Version: "1"}, nil)
	session, err := client.Connect(ctx, transport, nil)
	if err != nil {
		return fmt.Errorf("MCP server %s did not start: %w", c.srv.Name, err)
	}
	var list []*sdk.Tool
	for t, err := range session.Tools(ctx, nil) {
		if err != nil {
			session.Close()
			return fmt.Errorf("MCP server %s did not list its tools: %w", c.srv.Name, err)
		}
		list = append(list, t)
	}
	c.session, c.tools, c.failures = session, list, 0
	return nil
}

// env is a stdio server's environment: the commands' allowlist, and the
// variables the person named for it (a token it needs among them: the
// person gave it to this server, and to no model or command).
func (m *Manager) env(names []string) []string {
	env := sandbox.Environ(os.Environ(), nil, nil)
	for _, n := range names {
		if v := m.getenv(n); v != "" {
			env = sandbox.SetEnv(env, n, v)
		}
	}
	return env
}

// headers reads each header's value from the variable it names.
func (m *Manager) headers(h map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range h {
		out[k] = m.getenv(v)
	}
	return out
}

type headers struct {
	base http.RoundTripper
	set  map[string]string
}

func (h *headers) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.set {
		r.Header.Set(k, v)
	}
	return h.base.RoundTrip(r)
}

// session is c's live session, started again after a backoff once lost.
func (m *Manager) session(ctx context.Context, c *conn) (*sdk.ClientSession, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session != nil {
		return c.session, nil
	}
	if now := time.Now(); now.Before(c.retryAt) {
		return nil, fmt.Errorf("MCP server %s is not running (%v); it is started again in %s", c.srv.Name, c.lastErr, c.retryAt.Sub(now).Round(time.Second))
	}
	if err := m.connect(ctx, c); err != nil {
		c.failures++
		c.retryAt = time.Now().Add(min(time.Duration(1<<min(c.failures, 6))*time.Second, time.Minute))
		c.lastErr = err
		return nil, err
	}
	c.lastErr = nil
	return c.session, nil
}

// lost forgets a session that failed, so the next call starts it again.
func (m *Manager) lost(c *conn, s *sdk.ClientSession, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.session == s {
		s.Close()
		c.session, c.lastErr = nil, err
	}
}

// tool is one server's tool as an agent's tool.
type tool struct {
	c    *conn
	m    *Manager
	def  *sdk.Tool
	name string
	cap  int
}

func (t *tool) Name() string { return t.name }

func (t *tool) Description() string {
	d := t.def.Description
	if d == "" {
		d = t.def.Title
	}
	return fmt.Sprintf("%s (from the MCP server %s)", strings.TrimSpace(d), t.c.srv.Name)
}

// Params is the server's own input schema.
func (t *tool) Params() any {
	raw, err := json.Marshal(t.def.InputSchema)
	if err != nil || len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return json.RawMessage(raw)
}

// ReadOnly: the server says the tool changes nothing.
func (t *tool) ReadOnly() bool { return readOnly(t.def) }

func readOnly(t *sdk.Tool) bool { return t.Annotations != nil && t.Annotations.ReadOnlyHint }

func (t *tool) Run(ctx context.Context, args json.RawMessage) (tools.Result, error) {
	var a map[string]any
	if len(args) > 0 && string(args) != "null" {
		if err := json.Unmarshal(args, &a); err != nil {
			return tools.Errorf("the arguments are not a JSON object: %v", err), nil
		}
	}
	d := t.c.srv.CallTimeout
	if d <= 0 {
		d = DefaultCallTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	s, err := t.m.session(ctx, t.c)
	if err != nil {
		return tools.Errorf("%v", err), nil
	}
	res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: t.def.Name, Arguments: a})
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.m.lost(t.c, s, err)
			return tools.Errorf("the MCP server %s did not answer %s within %s; it is started again for the next call", t.c.srv.Name, t.def.Name, d), nil
		}
		if errors.Is(err, sdk.ErrConnectionClosed) {
			t.m.lost(t.c, s, err)
			return tools.Errorf("the MCP server %s went away during the call (%v); it is started again for the next call", t.c.srv.Name, err), nil
		}
		return tools.Errorf("the MCP server %s refused the call: %v", t.c.srv.Name, err), nil
	}
	text := Text(res)
	if len(text) > t.cap && t.cap > 0 {
		text = text[:t.cap] + fmt.Sprintf("\n[… %d bytes cut]", len(text)-t.cap)
	}
	if res.IsError {
		return tools.Errorf("%s", text), nil
	}
	return tools.Result{Content: text}, nil
}

// Text is a call's result as the model reads it.
func Text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, v.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[an image, %s, %d bytes: not shown]", v.MIMEType, len(v.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio, %s, %d bytes: not played]", v.MIMEType, len(v.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", v.Name, v.URI))
		case *sdk.EmbeddedResource:
			if v.Resource != nil && v.Resource.Text != "" {
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", v.Resource.URI, v.Resource.Text))
			} else if v.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %d bytes of %s]", v.Resource.URI, len(v.Resource.Blob), v.Resource.MIMEType))
			}
		}
	}
	if res.StructuredContent != nil && len(parts) == 0 {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 {
		return "(no output)"
	}
	return strings.Join(parts, "\n")
}

// ReadOnly reports whether the tool of that model name is one its server
// marks readOnlyHint.
func (m *Manager) ReadOnly(name string) bool {
	if m == nil {
		return false
	}
	for _, c := range m.sorted() {
		c.mu.Lock()
		for _, t := range c.tools {
			if ToolName(c.srv.Name, t.Name) == name {
				ro := readOnly(t)
				c.mu.Unlock()
				return ro
			}
		}
		c.mu.Unlock()
	}
	return false
}
