package llm

import (
	"bytes"
	"encoding/json"
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// Encoding a request body. json.Marshal of go-openai's request spent most
// of a turn's encoding on the tools: each Tool marshals itself through a
// map, and encoding/json then re-validates and compacts every schema twice,
// for every request of every agent, though the tools never change. Here
// each tool's JSON is made once per process, and messages are encoded
// without go-openai's per-message MarshalJSON (whose output encoding/json
// compacts once more). The JSON says the same as json.Marshal(creq).

// plainMessage is openai.ChatCompletionMessage without its MarshalJSON:
// the conversion below stops compiling if go-openai adds a field, so no
// field can be dropped unnoticed. MultiContent messages take the slow path.
type plainMessage struct {
	Role             string                   `json:"role"`
	Content          string                   `json:"content,omitempty"`
	Refusal          string                   `json:"refusal,omitempty"`
	MultiContent     []openai.ChatMessagePart `json:"-"`
	Name             string                   `json:"name,omitempty"`
	ReasoningContent string                   `json:"reasoning_content,omitempty"`
	FunctionCall     *openai.FunctionCall     `json:"function_call,omitempty"`
	ToolCalls        []openai.ToolCall        `json:"tool_calls,omitempty"`
	ToolCallID       string                   `json:"tool_call_id,omitempty"`
}

// EncodeMessage is json.Marshal(m) without go-openai's second pass.
func EncodeMessage(m openai.ChatCompletionMessage) ([]byte, error) {
	if m.MultiContent != nil {
		return json.Marshal(m)
	}
	return json.Marshal(plainMessage(m))
}

var messagesNull = []byte(`"messages":null`)

// encodeRequest is json.Marshal(creq), the same JSON made faster.
func encodeRequest(creq openai.ChatCompletionRequest) ([]byte, error) {
	var plain []plainMessage // nil stays null, as json.Marshal writes it
	if creq.Messages != nil {
		plain = make([]plainMessage, len(creq.Messages))
	}
	for i, m := range creq.Messages {
		if m.MultiContent != nil {
			return json.Marshal(creq)
		}
		plain[i] = plainMessage(m)
	}
	rest := creq
	rest.Messages, rest.Tools = nil, nil
	head, err := json.Marshal(rest)
	if err != nil {
		return nil, err
	}
	// "messages" has no omitempty: it is there, as null. No string value can
	// hold these bytes: JSON escapes the quotes inside a string.
	at := bytes.Index(head, messagesNull)
	if at < 0 || head[len(head)-1] != '}' {
		return json.Marshal(creq)
	}
	msgs, err := json.Marshal(plain)
	if err != nil {
		return nil, err
	}
	tools := make([][]byte, len(creq.Tools))
	size := len(head) + len(msgs) + len(`,"tools":[]`)
	for i, t := range creq.Tools {
		if tools[i], err = toolCache.encode(t); err != nil {
			return nil, err
		}
		size += len(tools[i]) + 1
	}
	buf := make([]byte, 0, size) // the body's size exactly: it is tens of KB
	buf = append(buf, head[:at]...)
	buf = append(buf, `"messages":`...)
	buf = append(buf, msgs...)
	buf = append(buf, head[at+len(messagesNull):len(head)-1]...)
	if len(tools) > 0 {
		buf = append(buf, `,"tools":[`...)
		for i, b := range tools {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, b...)
		}
		buf = append(buf, ']')
	}
	return append(buf, '}'), nil
}

// toolJSON keeps each tool's encoding, keyed by everything that goes into
// it; a tool whose parameters are not already JSON is encoded each time.
type toolJSON struct {
	mu      sync.RWMutex
	entries map[toolKey][]toolEntry
	n       int
}

type toolKey struct {
	typ, name, desc string
	strict          bool
}

type toolEntry struct {
	params, enc []byte
}

// maxToolEntries bounds the cache: agents have a few dozen tools at most,
// so this only stops a program that makes tools without end.
const maxToolEntries = 512

var toolCache = &toolJSON{entries: map[toolKey][]toolEntry{}}

func (c *toolJSON) encode(t openai.Tool) ([]byte, error) {
	params, ok := []byte(nil), false
	if t.Function != nil && len(t.Parameters) == 0 {
		params, ok = t.Function.Parameters.(json.RawMessage)
	}
	if !ok {
		return json.Marshal(t)
	}
	key := toolKey{typ: string(t.Type), name: t.Function.Name, desc: t.Function.Description, strict: t.Function.Strict}
	c.mu.RLock()
	for _, e := range c.entries[key] {
		if bytes.Equal(e.params, params) {
			c.mu.RUnlock()
			return e.enc, nil
		}
	}
	c.mu.RUnlock()
	enc, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n < maxToolEntries {
		c.entries[key] = append(c.entries[key], toolEntry{params: bytes.Clone(params), enc: enc})
		c.n++
	}
	return enc, nil
}
