package loop

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// assembler rebuilds one assistant message from stream chunks. Tool-call
// deltas are matched by id first, then by index; a new id on a used index is
// a new call (servers that number every parallel call 0).
type assembler struct {
	agent   string
	onDelta func(Delta)
	content strings.Builder
	calls   []openai.ToolCall
	byIndex map[int]int // chunk index → position in calls of its latest call
	byID    map[string]int
	args    []*strings.Builder // arguments per call, joined at the end
	named   []bool             // whether the ToolName delta went out
	finish  string
	usage   openai.Usage
}

func newAssembler(agent string, onDelta func(Delta)) *assembler {
	return &assembler{agent: agent, onDelta: onDelta, byIndex: map[int]int{}, byID: map[string]int{}}
}

func (a *assembler) add(chunk openai.ChatCompletionStreamResponse) {
	if chunk.Usage != nil {
		a.usage = *chunk.Usage
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue // we ask for one choice
		}
		if ch.FinishReason != "" {
			a.finish = string(ch.FinishReason)
		}
		if ch.Delta.Content != "" {
			a.content.WriteString(ch.Delta.Content)
			a.emit(Delta{Content: ch.Delta.Content})
		}
		for _, tc := range ch.Delta.ToolCalls {
			a.addCall(tc)
		}
	}
}

func (a *assembler) addCall(tc openai.ToolCall) {
	pos := a.find(tc)
	if pos < 0 {
		pos = len(a.calls)
		a.calls = append(a.calls, openai.ToolCall{Type: openai.ToolTypeFunction})
		a.args = append(a.args, &strings.Builder{})
		a.named = append(a.named, false)
	}
	if tc.Index != nil {
		a.byIndex[*tc.Index] = pos
	}
	call := &a.calls[pos]
	if tc.ID != "" && call.ID == "" {
		call.ID = tc.ID
		a.byID[tc.ID] = pos
	}
	if tc.Type != "" {
		call.Type = tc.Type
	}
	// Servers that resend the whole name each chunk send the same name: keep one.
	if name := tc.Function.Name; name != "" && name != call.Function.Name {
		call.Function.Name += name
	}
	a.args[pos].WriteString(tc.Function.Arguments)
	if !a.named[pos] && call.Function.Name != "" {
		a.named[pos] = true
		a.emit(Delta{ToolName: call.Function.Name})
	}
}

// find returns the position of the call this delta continues, or -1 for a new call.
func (a *assembler) find(tc openai.ToolCall) int {
	if tc.ID != "" {
		if pos, ok := a.byID[tc.ID]; ok {
			return pos
		}
	}
	if tc.Index != nil {
		pos, ok := a.byIndex[*tc.Index]
		if !ok {
			return -1
		}
		if tc.ID != "" && a.calls[pos].ID != "" {
			return -1 // a different id on a used index
		}
		return pos
	}
	if tc.ID == "" && len(a.calls) > 0 {
		return len(a.calls) - 1 // no index, no id: the call in progress
	}
	return -1
}

func (a *assembler) emit(d Delta) {
	if a.onDelta != nil {
		d.Agent = a.agent
		a.onDelta(d)
	}
}

func (a *assembler) response() Response {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: a.content.String()}
	for i := range a.calls {
		a.calls[i].Function.Arguments = a.args[i].String()
	}
	if len(a.calls) > 0 {
		msg.ToolCalls = a.calls
	}
	return Response{Message: msg, Usage: a.usage, FinishReason: a.finish}
}
