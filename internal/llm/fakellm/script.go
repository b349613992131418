package fakellm

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Call is one request the server received, as the script sees it.
type Call struct {
	Agent  string // the X-Agentteam-Agent header
	N      int    // 0-based index of this agent's calls
	Req    openai.ChatCompletionRequest
	Stream bool
	// Header is the request's HTTP header (the key is in it: tests only).
	Header http.Header
}

// ToolCall is one tool call of a scripted reply.
type ToolCall struct {
	ID   string // generated when empty
	Name string
	Args string // raw JSON arguments
}

// Reply is what the server answers to one call.
type Reply struct {
	Content   string
	ToolCalls []ToolCall
	// Status, when 400 or more (429, 500…), answers with an OpenAI-shaped error
	// whose message is Content.
	Status     int
	RetryAfter string // Retry-After header value, with Status
	// Body, when set, is sent raw (an HTML error page, say) with ContentType
	// and Status (200 when unset).
	Body        string
	ContentType string
	// Delay is latency before answering; it ends early if the request does.
	Delay time.Duration
	// Quirks of some servers' streams.
	RepeatIndexZero bool
	IDsInEveryChunk bool
	// DropMidStream closes the connection after part of the answer.
	DropMidStream bool
	// Usage is estimated from the request and reply when nil.
	Usage *openai.Usage

	// Playbacks of real servers' replies (see playback.go).

	// NoIDs sends the tool calls without ids (Gemini through proxies, older Ollama).
	NoIDs bool
	// WholeCalls streams each tool call whole in one chunk; with NoIndex
	// the deltas carry no index (Gemini through proxies), with
	// RepeatIndexZero they all carry index 0.
	WholeCalls bool
	NoIndex    bool
	// ArgsAsObject writes "arguments" as a JSON object (llama.cpp).
	ArgsAsObject bool
	// Reasoning is sent before the content, in ReasoningField
	// ("reasoning_content", DeepSeek's, by default; or "reasoning").
	Reasoning      string
	ReasoningField string
	// UsageInXGroq puts the usage only in x_groq.usage (Groq).
	UsageInXGroq bool
	// FinishLength cuts the last tool call's arguments in half and ends
	// with finish_reason "length" (the output limit).
	FinishLength bool
	// EmptyWhenStreamed answers a streamed request with nothing but
	// finish_reason "stop" (Ollama dropping streamed tool calls); an
	// unstreamed request gets the whole reply.
	EmptyWhenStreamed bool
	// KeepAlives sends that many SSE comment lines (KeepAlive, default
	// ": OPENROUTER PROCESSING") before the first chunk.
	KeepAlives int
	KeepAlive  string
	// NoDone never sends [DONE] and keeps the connection open.
	NoDone bool
	// NoFinish ends the stream cleanly after the deltas, with neither
	// finish_reason nor [DONE].
	NoFinish bool
	// StallAfter stops writing after that many chunks, connection open.
	StallAfter int
	// InBandError follows the content with OpenRouter's mid-stream error
	// chunk carrying this message and InBandCode (default 502).
	InBandError string
	InBandCode  int
	// ThoughtSignatures signs the first tool call (Gemini's
	// extra_content.google.thought_signature); see RequireThoughtSignatures.
	ThoughtSignatures bool
	// AzureFilters adds Azure OpenAI's content filter annotations (a first
	// chunk with no choices, results on every choice, a last chunk without
	// a delta); ContentFiltered cuts the content in half and ends with
	// finish_reason "content_filter" (Azure's filter stopping the reply).
	AzureFilters    bool
	ContentFiltered bool
	// MultiLineData streams each chunk's JSON over several data: lines of
	// one event (the SSE spec joins them with "\n").
	MultiLineData bool
	// ToolCallsAsText writes the tool calls into the content as Qwen /
	// Hermes <tool_call> blocks (vLLM or Ollama without a tool parser).
	ToolCallsAsText bool
}

// Script decides the reply to each call. It runs concurrently for
// concurrent requests and may block (it holds one in-flight request).
type Script func(c Call) Reply

// Always answers every call with r.
func Always(r Reply) Script {
	return func(Call) Reply { return r }
}

// Queue answers each agent's calls from its own list, in order; once a list
// is used up (or an agent has none) fallback answers. A nil fallback ends
// the agent's turn with a text saying the script ran out.
func Queue(replies map[string][]Reply, fallback func(Call) Reply) Script {
	var mu sync.Mutex
	queues := make(map[string][]Reply, len(replies))
	for agent, rs := range replies {
		queues[agent] = append([]Reply(nil), rs...)
	}
	return func(c Call) Reply {
		mu.Lock()
		q := queues[c.Agent]
		if len(q) > 0 {
			queues[c.Agent] = q[1:]
			mu.Unlock()
			return q[0]
		}
		mu.Unlock()
		if fallback != nil {
			return fallback(c)
		}
		return Reply{Content: fmt.Sprintf("fakellm: no scripted reply left for %q (call %d)", c.Agent, c.N)}
	}
}
