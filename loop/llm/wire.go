package llm

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// What servers send, read leniently: go-openai's types for requests and
// the message kept in the session; these for decoding answers, because
// servers bend the format (arguments as an object, usage under x_groq,
// reasoning, an error inside a 200 answer or a stream chunk).

// wireResponse is a whole (non-streaming) answer.
type wireResponse struct {
	Choices []struct {
		Message      wireMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	wireExtras
}

// wireChunk is one chunk of a streamed answer.
type wireChunk struct {
	Choices []struct {
		Index        int         `json:"index"`
		Delta        wireMessage `json:"delta"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	wireExtras
}

// wireExtras are the top-level fields both shapes share.
type wireExtras struct {
	Usage *openai.Usage `json:"usage"`
	XGroq *struct {
		Usage *openai.Usage `json:"usage"`
	} `json:"x_groq"`
	// Error is an error inside a 200 answer or a chunk (OpenRouter); Object
	// is "error" for vLLM's.
	Error  json.RawMessage `json:"error"`
	Object string          `json:"object"`
}

// usage is the answer's usage wherever the server put it; nil if nowhere.
func (x *wireExtras) usage() *openai.Usage {
	if x.Usage != nil {
		return x.Usage
	}
	if x.XGroq != nil {
		return x.XGroq.Usage
	}
	return nil
}

// isError: the body is an error, not an answer.
func (x *wireExtras) isError() bool {
	return (len(x.Error) > 0 && !bytes.Equal(x.Error, []byte("null"))) || x.Object == "error"
}

type wireMessage struct {
	Content          string         `json:"content"`
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []wireToolCall `json:"tool_calls"`
}

func (m *wireMessage) reasoning() string {
	if m.ReasoningContent != "" {
		return m.ReasoningContent
	}
	return m.Reasoning
}

type wireToolCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string   `json:"name"`
		Arguments wireArgs `json:"arguments"`
	} `json:"function"`
	ExtraContent *extraContent `json:"extra_content"` // Gemini's thought signature
}

// wireArgs are a call's arguments: a JSON string as the format says, or
// the JSON object itself (llama.cpp), kept as its text.
type wireArgs string

func (a *wireArgs) UnmarshalJSON(b []byte) error {
	switch {
	case len(b) == 0 || bytes.Equal(b, []byte("null")):
		*a = ""
	case b[0] == '"' && len(b) >= 2 && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b):
		// No escapes: the text between the quotes is the string (the
		// decoder has checked the JSON already). Most argument pieces.
		*a = wireArgs(b[1 : len(b)-1])
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*a = wireArgs(s)
	default:
		*a = wireArgs(b)
	}
	return nil
}

// response is the reply of a whole answer, with its calls' signatures.
func (m *wireMessage) response() Response {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: m.Content,
		ReasoningContent: m.reasoning()}
	var sigs []string
	for i, tc := range m.ToolCalls {
		msg.ToolCalls = append(msg.ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolType(tc.Type),
			Function: openai.FunctionCall{Name: tc.Function.Name, Arguments: string(tc.Function.Arguments)}})
		if sig := tc.ExtraContent.signature(); sig != "" {
			if sigs == nil {
				sigs = make([]string, len(m.ToolCalls))
			}
			sigs[i] = sig
		}
	}
	return Response{Message: msg, signatures: sigs}
}
