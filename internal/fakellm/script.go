package fakellm

import (
	"fmt"
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
