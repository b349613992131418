package llm

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Decoding stream chunks. A turn's reply comes in many small chunks and
// json.Unmarshal's reflection was most of the reader's CPU, so chunks of
// the usual shape (OpenAI's: id, object, created, model, choices with a
// delta of role, content, reasoning and tool calls, finish_reason) are
// read by hand. Anything else (usage, errors, extra fields, arguments as
// an object) makes decodeChunk fall back to json.Unmarshal, so the
// result is always what json.Unmarshal gives.

// decodeChunk fills ch from payload as json.Unmarshal would.
func decodeChunk(payload []byte, ch *wireChunk) error {
	p := chunkParser{b: payload}
	if p.chunk(ch) && p.end() {
		return nil
	}
	*ch = wireChunk{}
	return json.Unmarshal(payload, ch)
}

// chunkParser reads one chunk; every method reports false for anything it
// does not know, and the caller starts over with json.Unmarshal.
type chunkParser struct {
	b []byte
	i int
}

func (p *chunkParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *chunkParser) end() bool {
	p.ws()
	return p.i == len(p.b)
}

// consume skips space and takes c.
func (p *chunkParser) consume(c byte) bool {
	p.ws()
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *chunkParser) peek() byte {
	p.ws()
	if p.i < len(p.b) {
		return p.b[p.i]
	}
	return 0
}

// object calls field for each key of an object until it ends.
func (p *chunkParser) object(field func(key []byte) bool) bool {
	if !p.consume('{') {
		return false
	}
	if p.consume('}') {
		return true
	}
	for {
		key, ok := p.rawString()
		if !ok || !p.consume(':') || !field(key) {
			return false
		}
		if p.consume('}') {
			return true
		}
		if !p.consume(',') {
			return false
		}
	}
}

// array calls elem for each element of an array, or takes null.
func (p *chunkParser) array(elem func() bool) bool {
	if p.null() {
		return true
	}
	if !p.consume('[') {
		return false
	}
	if p.consume(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if p.consume(']') {
			return true
		}
		if !p.consume(',') {
			return false
		}
	}
}

func (p *chunkParser) null() bool {
	p.ws()
	if bytes.HasPrefix(p.b[p.i:], []byte("null")) {
		p.i += 4
		return true
	}
	return false
}

// rawString takes a string without escapes and returns its bytes; a string
// with escapes, control characters or bad UTF-8 is not taken.
func (p *chunkParser) rawString() ([]byte, bool) {
	if !p.consume('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			return s, utf8.Valid(s)
		case c == '\\' || c < 0x20:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// str takes a string, escapes and all, or null (as "").
func (p *chunkParser) str(dst *string) bool {
	if p.null() {
		return true
	}
	p.ws()
	start := p.i
	if s, ok := p.rawString(); ok {
		*dst = string(s)
		return true
	}
	// Escapes: find the closing quote, then let encoding/json read it.
	p.i = start + 1
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			return json.Unmarshal(p.b[start:p.i], dst) == nil
		}
		p.i++
	}
	return false
}

// scalar skips a string, a number, true, false or null.
func (p *chunkParser) scalar() bool {
	var s string
	switch c := p.peek(); {
	case c == '"' || c == 'n':
		return p.str(&s)
	case c == 't' && bytes.HasPrefix(p.b[p.i:], []byte("true")):
		p.i += 4
		return true
	case c == 'f' && bytes.HasPrefix(p.b[p.i:], []byte("false")):
		p.i += 5
		return true
	}
	_, ok := p.number()
	return ok
}

// number takes a JSON number and returns it if it is an integer.
func (p *chunkParser) number() (int, bool) {
	p.ws()
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		p.i++
	}
	text := p.b[start:p.i]
	if len(text) == 0 || !json.Valid(text) {
		return 0, false
	}
	n, err := strconv.Atoi(string(text))
	return n, err == nil
}

func (p *chunkParser) integer(dst *int) bool {
	n, ok := p.number()
	*dst = n
	return ok
}

func (p *chunkParser) chunk(ch *wireChunk) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "id", "created", "model", "system_fingerprint", "service_tier", "provider":
			return p.scalar()
		case "object":
			return p.str(&ch.Object) // vLLM's "error" says what the chunk is
		case "choices":
			ch.Choices = nil
			return p.array(func() bool {
				ch.Choices = append(ch.Choices, struct {
					Index        int         `json:"index"`
					Delta        wireMessage `json:"delta"`
					FinishReason string      `json:"finish_reason"`
				}{})
				c := &ch.Choices[len(ch.Choices)-1]
				return p.choice(&c.Index, &c.Delta, &c.FinishReason)
			})
		}
		return false // usage, an error, anything else: json.Unmarshal reads it
	})
}

func (p *chunkParser) choice(index *int, delta *wireMessage, finish *string) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "index":
			return p.integer(index)
		case "finish_reason":
			return p.str(finish)
		case "logprobs":
			return p.null()
		case "delta":
			return p.delta(delta)
		}
		return false
	})
}

func (p *chunkParser) delta(d *wireMessage) bool {
	return p.object(func(key []byte) bool {
		var role string
		switch string(key) {
		case "role":
			return p.str(&role)
		case "content":
			return p.str(&d.Content)
		case "reasoning_content":
			return p.str(&d.ReasoningContent)
		case "reasoning":
			return p.str(&d.Reasoning)
		case "refusal":
			return p.null()
		case "tool_calls":
			d.ToolCalls = nil
			return p.array(func() bool {
				d.ToolCalls = append(d.ToolCalls, wireToolCall{})
				return p.toolCall(&d.ToolCalls[len(d.ToolCalls)-1])
			})
		}
		return false
	})
}

func (p *chunkParser) toolCall(tc *wireToolCall) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "index":
			if p.null() {
				tc.Index = nil
				return true
			}
			var n int
			if !p.integer(&n) {
				return false
			}
			tc.Index = &n
			return true
		case "id":
			return p.str(&tc.ID)
		case "type":
			return p.str(&tc.Type)
		case "function":
			return p.object(func(key []byte) bool {
				switch string(key) {
				case "name":
					return p.str(&tc.Function.Name)
				case "arguments":
					if c := p.peek(); c != '"' && c != 'n' {
						return false // an object (llama.cpp): wireArgs keeps its text
					}
					var s string
					if !p.str(&s) {
						return false
					}
					tc.Function.Arguments = wireArgs(s)
					return true
				}
				return false
			})
		}
		return false
	})
}
