package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"
	"github.com/sashabaranov/go-openai/jsonschema"
)

// Set is the fixed list of tools one agent may call.
type Set struct {
	tools  []Tool
	byName map[string]Tool
	defs   []openai.Tool  // computed once in NewSet
	permit PermissionGate // nil: every call runs
	hooks  ToolHooks      // nil: none
}

// guarded makes every call of s pass h and then g first (nil: none is
// checked), and h see every result.
func (s *Set) guarded(g PermissionGate, h ToolHooks) *Set {
	s.permit, s.hooks = g, h
	return s
}

// parallelTool is implemented by tools that may run alongside other
// parallel calls of the same model turn.
type parallelTool interface {
	Parallel() bool
}

// NewSet builds a set from tools. A duplicate name or a Params type the
// schema generator cannot describe is a programming error and panics.
func NewSet(ts ...Tool) *Set {
	s := &Set{byName: make(map[string]Tool, len(ts))}
	for _, t := range ts {
		name := t.Name()
		if _, dup := s.byName[name]; dup {
			panic(fmt.Sprintf("tools: duplicate tool %q", name))
		}
		params, err := schemaJSON(t.Params())
		if err != nil {
			panic(fmt.Sprintf("tools: schema for %q: %v", name, err))
		}
		s.tools = append(s.tools, t)
		s.byName[name] = t
		s.defs = append(s.defs, openai.Tool{
			Type: openai.ToolTypeFunction,
			Function: &openai.FunctionDefinition{
				Name:        name,
				Description: t.Description(),
				Parameters:  params,
			},
		})
	}
	return s
}

// schemas caches each argument type's rendered schema: every teammate gets
// the same tools, and generating them was a tenth of a team's CPU. It holds
// only data derived from types, so sharing it across teams is safe.
var schemas sync.Map // reflect.Type → json.RawMessage

// schemaJSON renders the schema once as bytes, so marshalling it later is
// read-only and safe from many goroutines.
func schemaJSON(params any) (json.RawMessage, error) {
	if raw, ok := params.(json.RawMessage); ok {
		return raw, nil // a schema given whole (an MCP server's)
	}
	key := reflect.TypeOf(params)
	if v, ok := schemas.Load(key); ok {
		return v.(json.RawMessage), nil
	}
	raw, err := renderSchema(params)
	if err == nil {
		schemas.Store(key, raw)
	}
	return raw, err
}

func renderSchema(params any) (json.RawMessage, error) {
	def, err := jsonschema.GenerateSchemaForType(params)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(def)
	if err != nil {
		return nil, fmt.Errorf("marshal schema: %w", err)
	}
	// The generator drops an empty "properties"; some servers insist on it.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("reparse schema: %w", err)
	}
	if _, ok := m["properties"]; !ok && m["type"] == "object" {
		m["properties"] = map[string]any{}
	}
	return json.Marshal(m)
}

// Definitions are the tools as the chat-completions API wants them.
func (s *Set) Definitions() []openai.Tool {
	out := make([]openai.Tool, len(s.defs))
	for i, d := range s.defs {
		fn := *d.Function // a copy, so a caller cannot edit the cache
		out[i] = openai.Tool{Type: d.Type, Function: &fn}
	}
	return out
}

// SchemaBytes is about how many bytes the definitions take in a request,
// for estimating its size.
func (s *Set) SchemaBytes() int { return DefinitionBytes(s.defs) }

// DefinitionBytes is about how many bytes defs take in a request.
func DefinitionBytes(defs []openai.Tool) int {
	n := 0
	for _, d := range defs {
		if d.Function == nil {
			continue
		}
		n += len(d.Function.Name) + len(d.Function.Description) + 32
		if raw, ok := d.Function.Parameters.(json.RawMessage); ok {
			n += len(raw)
		}
	}
	return n
}

// Names lists the tools in the order they were given.
func (s *Set) Names() []string {
	names := make([]string, len(s.tools))
	for i, t := range s.tools {
		names[i] = t.Name()
	}
	return names
}

// Has reports whether the set holds a tool of that name.
func (s *Set) Has(name string) bool {
	_, ok := s.byName[name]
	return ok
}

// Parallel reports whether calls to this tool may run concurrently with
// neighbouring parallel calls in the same model turn. Unknown tools are not.
func (s *Set) Parallel(name string) bool {
	p, ok := s.byName[name].(parallelTool)
	return ok && p.Parallel()
}

// Call runs one tool call. Every failure, a panic included, comes back as
// an error Result for the model to read.
func (s *Set) Call(ctx context.Context, name, args string) (res Result) {
	t, ok := s.byName[name]
	if !ok {
		return Errorf("unknown tool %q; available tools: %s", name, strings.Join(s.Names(), ", "))
	}
	if strings.TrimSpace(args) == "" {
		args = "{}"
	}
	defer func() {
		if r := recover(); r != nil {
			res = Errorf("internal error: tool %s panicked: %v", name, r)
		}
	}()
	if s.hooks != nil {
		if ok, why := s.hooks.BeforeTool(ctx, name, json.RawMessage(args)); !ok {
			return Errorf("a PreToolUse hook blocked this call: %s", why)
		}
	}
	if s.permit != nil {
		if ok, why := s.permit.Permit(ctx, name, json.RawMessage(args)); !ok {
			return Errorf("%s", why)
		}
	}
	r, err := t.Run(ctx, json.RawMessage(args))
	if err != nil {
		r = Errorf("internal error: %s: %v", name, err)
	}
	if s.hooks != nil {
		if note := s.hooks.AfterTool(ctx, name, json.RawMessage(args), r); note != "" {
			r.Content += "\n\n[PostToolUse hook] " + note
		}
	}
	return r
}
