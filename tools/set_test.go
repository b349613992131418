package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

type panicArgs struct {
	X string `json:"x" description:"anything"`
}

// panicTool panics or fails on demand, to test Set.Call's guard rails.
func panicTool(err error) Tool {
	return newTool("boom", "panics", func(ctx context.Context, a panicArgs) (Result, error) {
		if err != nil {
			return Result{}, err
		}
		var m map[string]int
		//lint:ignore SA5000 a nil map write is the real runtime panic this tool exists for
		m["x"]++
		return Text("unreachable"), nil
	})
}

func TestSetNames(t *testing.T) {
	env, _, _, _ := testEnv(t)
	lead := []string{"spawn_teammate", "list_teammates", "send_message", "broadcast", "read_inbox", "bash", "read_file", "write_file", "edit_file"}
	mate := []string{"send_message", "read_inbox", "bash", "read_file", "write_file", "edit_file"}
	if got := ForLead(env).Names(); !slices.Equal(got, lead) {
		t.Errorf("lead tools = %v, want %v", got, lead)
	}
	env.Team = nil
	s := ForTeammate(env)
	if got := s.Names(); !slices.Equal(got, mate) {
		t.Errorf("teammate tools = %v, want %v", got, mate)
	}
	for _, n := range []string{"spawn_teammate", "list_teammates", "broadcast"} {
		if s.Has(n) {
			t.Errorf("teammate set has lead-only tool %s", n)
		}
	}
	if !s.Has("bash") {
		t.Error("teammate set lacks bash")
	}
}

func TestSetParallel(t *testing.T) {
	env, _, _, _ := testEnv(t)
	s := ForLead(env)
	want := map[string]bool{
		"read_file": true, "list_teammates": true, "spawn_teammate": true,
		"bash": false, "write_file": false, "edit_file": false,
		"send_message": false, "broadcast": false, "read_inbox": false, "nope": false,
	}
	for name, p := range want {
		if got := s.Parallel(name); got != p {
			t.Errorf("Parallel(%s) = %v, want %v", name, got, p)
		}
	}
}

func TestDefinitionsSchema(t *testing.T) {
	env, _, _, _ := testEnv(t)
	s := ForLead(env)
	defs := s.Definitions()
	if len(defs) != len(s.Names()) {
		t.Fatalf("%d definitions for %d tools", len(defs), len(s.Names()))
	}
	wantRequired := map[string][]string{
		"spawn_teammate": {"name", "prompt", "role"},
		"list_teammates": nil,
		"send_message":   {"content", "to"},
		"broadcast":      {"content"},
		"read_inbox":     nil,
		"bash":           {"command"},
		"read_file":      {"path"},
		"write_file":     {"content", "path"},
		"edit_file":      {"new_text", "old_text", "path"},
	}
	for _, d := range defs {
		if d.Type != "function" || d.Function == nil {
			t.Fatalf("bad definition %+v", d)
		}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("%s: marshal: %v", d.Function.Name, err)
		}
		var wire struct {
			Function struct {
				Name        string `json:"name"`
				Description string `json:"description"`
				Parameters  struct {
					Type       string                     `json:"type"`
					Properties map[string]json.RawMessage `json:"properties"`
					Required   []string                   `json:"required"`
					Defs       map[string]any             `json:"$defs"`
					Ref        string                     `json:"$ref"`
				} `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(b, &wire); err != nil {
			t.Fatalf("%s: %v\n%s", d.Function.Name, err, b)
		}
		f := wire.Function
		p := f.Parameters
		if f.Description == "" {
			t.Errorf("%s has no description", f.Name)
		}
		if p.Type != "object" || p.Properties == nil || p.Ref != "" || len(p.Defs) != 0 {
			t.Errorf("%s: parameters are not a flat object schema: %s", f.Name, b)
		}
		req := slices.Sorted(slices.Values(p.Required))
		if !slices.Equal(req, wantRequired[f.Name]) {
			t.Errorf("%s: required = %v, want %v", f.Name, req, wantRequired[f.Name])
		}
		for _, r := range req {
			var prop struct{ Type, Description string }
			if err := json.Unmarshal(p.Properties[r], &prop); err != nil || prop.Type != "string" || prop.Description == "" {
				t.Errorf("%s.%s: property %s lacks type or description", f.Name, r, p.Properties[r])
			}
		}
	}
}

func TestDefinitionsAreCachedAndCopied(t *testing.T) {
	env, _, _, _ := testEnv(t)
	s := ForLead(env)
	a := s.Definitions()
	a[0].Function.Name = "changed"
	if b := s.Definitions(); b[0].Function.Name != "spawn_teammate" {
		t.Fatalf("a caller's edit leaked into the cache: %q", b[0].Function.Name)
	}
	// Marshalling the cached schema from many goroutines must be race-free.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := json.Marshal(s.Definitions()); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestNewSetDuplicatePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("duplicate tool names did not panic")
		}
	}()
	NewSet(panicTool(nil), panicTool(nil))
}

func TestSetCallErrors(t *testing.T) {
	env, _, _, _ := testEnv(t)
	s := NewSet(newReadFile(env.Workspace, env.OutputCap), panicTool(nil))
	failing := NewSet(panicTool(errors.New("disk on fire")))
	tests := []struct {
		name, tool, args, want string
		set                    *Set
	}{
		{"unknown tool", "rm_rf", `{}`, `unknown tool "rm_rf"; available tools: read_file, boom`, s},
		{"broken JSON", "read_file", `{"path": `, "not valid JSON (unexpected end of JSON input)", s},
		{"array", "read_file", `[1]`, "must be a JSON object, not array", s},
		{"string", "read_file", `"a.txt"`, "must be a JSON object, not string", s},
		{"null", "read_file", `null`, "must be a JSON object, not null", s},
		{"empty args", "read_file", ``, `missing required argument "path"`, s},
		{"missing field", "read_file", `{"file": "a.txt"}`, `missing required argument "path"`, s},
		{"null field", "read_file", `{"path": null}`, `missing required argument "path"`, s},
		{"wrong type", "read_file", `{"path": 5}`, `argument "path" must be a JSON string, not number`, s},
		{"panic", "boom", `{"x": "y"}`, "internal error: tool boom panicked: assignment to entry in nil map", s},
		{"go error", "boom", `{"x": "y"}`, "internal error: boom: disk on fire", failing},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mustErr(t, tc.set.Call(context.Background(), tc.tool, tc.args), tc.want)
		})
	}
}

func TestSetCallLenientUnknownFields(t *testing.T) {
	env, _, _, _ := testEnv(t)
	mustOK(t, NewSet(newWriteFile(env.Workspace, env.Gate)).Call(context.Background(), "write_file", `{"path":"a.txt","content":"hi","mode":"0644"}`), "Wrote 2 bytes")
}

func TestErrorResultPrefix(t *testing.T) {
	r := Errorf("x %d", 1)
	if !r.IsError || !strings.HasPrefix(r.Content, "error: ") {
		t.Fatalf("Errorf = %+v", r)
	}
}

// Parallel tools share one Set; concurrent calls must not race.
func TestSetCallConcurrent(t *testing.T) {
	env, _, _, _ := testEnv(t)
	s := ForTeammate(env)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			path := fmt.Sprintf("f%d.txt", i)
			// t.Errorf, not mustOK: Fatal may not be called off the test goroutine.
			if r := s.Call(context.Background(), "write_file", fmt.Sprintf(`{"path":%q,"content":"n%d"}`, path, i)); r.IsError {
				t.Errorf("write %s: %s", path, r.Content)
			}
			if r := s.Call(context.Background(), "read_file", fmt.Sprintf(`{"path":%q}`, path)); r.IsError || r.Content != fmt.Sprintf("n%d", i) {
				t.Errorf("read %s: %+v", path, r)
			}
		})
	}
	wg.Wait()
}

// newTool decodes before run sees anything: a call that does not fit the
// argument struct is an error result and never reaches run.
func TestNewTool(t *testing.T) {
	ctx := context.Background()
	var got []string
	echo := func(ctx context.Context, a panicArgs) (Result, error) {
		got = append(got, a.X)
		return Text(a.X), nil
	}
	s := NewSet(newTool("echo", "echoes x", echo, parallel), newTool("plain", "echoes x", echo))
	mustOK(t, s.Call(ctx, "echo", `{"x":"hi","extra":1}`), "hi")
	mustErr(t, s.Call(ctx, "echo", `{}`), `missing required argument "x"`)
	mustErr(t, s.Call(ctx, "plain", `{"x":5}`), `argument "x" must be a JSON string, not number`)
	if !slices.Equal(got, []string{"hi"}) {
		t.Fatalf("run saw %q, want only the valid call", got)
	}
	if !s.Parallel("echo") || s.Parallel("plain") {
		t.Fatalf("Parallel(echo) = %v, Parallel(plain) = %v; want true, false", s.Parallel("echo"), s.Parallel("plain"))
	}
	if p, ok := s.byName["echo"].Params().(panicArgs); !ok || p != (panicArgs{}) {
		t.Fatalf("Params() = %#v, want a zero panicArgs", s.byName["echo"].Params())
	}
}
