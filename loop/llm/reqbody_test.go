package llm

import (
	"encoding/json"
	"reflect"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// encodeRequest must say exactly what json.Marshal of go-openai's request
// says, for every shape of request the client sends.
func TestEncodeRequestSaysWhatJSONMarshalSays(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a <path> & more"}},"required":["path"]}`)
	tool := func(name, desc string, params any) openai.Tool {
		return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: name, Description: desc, Parameters: params}}
	}
	convo := []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: "you are <lead> & \"boss\"\n\u2028"},
		{Role: openai.ChatMessageRoleUser, Content: "go", Name: "alice"},
		{Role: openai.ChatMessageRoleAssistant, ReasoningContent: "thinking", ToolCalls: []openai.ToolCall{
			{ID: "call_1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"a"}`}},
			{ID: "call_2", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "read_file", Arguments: `{"path":"b"}`}}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_1", Content: "ok"},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "call_2", Content: "ok"},
		{Role: openai.ChatMessageRoleAssistant, Content: "done", Refusal: "no"},
	}
	cases := map[string]openai.ChatCompletionRequest{
		"streamed with tools": {Model: "m", Messages: convo, Stream: true, StreamOptions: &openai.StreamOptions{IncludeUsage: true},
			Tools: []openai.Tool{tool("read_file", "reads", schema), tool("write_file", "", schema)}},
		"whole, max tokens":               {Model: "m", Messages: convo, MaxTokens: 100},
		"max completion tokens, no tools": {Model: `a"b`, Messages: convo[:2], MaxCompletionTokens: 7},
		"a tool that is not JSON yet":     {Model: "m", Messages: convo[:1], Tools: []openai.Tool{tool("t", "d", map[string]any{"type": "object"})}},
		"a tool with extra parameters": {Model: "m", Messages: convo[:1],
			Tools: []openai.Tool{{Type: "web_search", Parameters: map[string]any{"search_context_size": "low"}}}},
		"multi-part content": {Model: "m", Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser,
			MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "hi"}}}}},
		"no messages":    {Model: "m"},
		"empty messages": {Model: "m", Messages: []openai.ChatCompletionMessage{}},
	}
	for name, creq := range cases {
		t.Run(name, func(t *testing.T) {
			for range 2 { // the second time from the tool cache
				want, err := json.Marshal(creq)
				if err != nil {
					t.Fatal(err)
				}
				got, err := encodeRequest(creq)
				if err != nil {
					t.Fatal(err)
				}
				var g, w any
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatalf("not JSON: %v\n%s", err, got)
				}
				_ = json.Unmarshal(want, &w)
				if !reflect.DeepEqual(g, w) {
					t.Fatalf("encodeRequest:\n%s\njson.Marshal:\n%s", got, want)
				}
			}
		})
	}
}

// The session's lines are the same JSON as json.Marshal of each message.
func TestEncodeMessageSaysWhatJSONMarshalSays(t *testing.T) {
	idx := 2
	for _, m := range []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleUser, Content: "<message from=\"a\">\n&</message>", Name: "n"},
		{Role: openai.ChatMessageRoleAssistant, ReasoningContent: "r", Refusal: "x", FunctionCall: &openai.FunctionCall{Name: "f", Arguments: "{}"},
			ToolCalls: []openai.ToolCall{{Index: &idx, ID: "c", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "t", Arguments: "{}"}}}},
		{Role: openai.ChatMessageRoleTool, ToolCallID: "c", Content: "ok"},
		{Role: openai.ChatMessageRoleUser, MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "hi"}}},
	} {
		got, err := EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(m)
		if string(got) != string(want) {
			t.Errorf("EncodeMessage %s\njson.Marshal   %s", got, want)
		}
	}
	if _, err := EncodeMessage(openai.ChatCompletionMessage{Content: "a", MultiContent: []openai.ChatMessagePart{{Text: "b"}}}); err == nil {
		t.Error("content and parts together were encoded")
	}
}

// A tool of the same name whose schema or description changed is encoded
// anew, not served from the cache.
func TestEncodeRequestToolChangedIsEncodedAnew(t *testing.T) {
	mk := func(desc, schema string) openai.ChatCompletionRequest {
		return openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}},
			Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: "changing_tool", Description: desc, Parameters: json.RawMessage(schema)}}}}
	}
	for _, creq := range []openai.ChatCompletionRequest{
		mk("one", `{"type":"object"}`), mk("two", `{"type":"object"}`), mk("two", `{"type":"object","properties":{}}`), mk("one", `{"type":"object"}`),
	} {
		got, err := encodeRequest(creq)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(creq)
		var g, w any
		_ = json.Unmarshal(got, &g)
		_ = json.Unmarshal(want, &w)
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("encodeRequest:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
}
