package llm

import (
	"encoding/json"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// assembler rebuilds one assistant message from stream chunks. Tool-call
// deltas are matched by id first, then by index; a new id on a used index is
// a new call (servers that number every parallel call 0), and so is a new
// name once the call in progress has one (servers that send each call whole,
// with no index and no id, or all at index 0).
type assembler struct {
	agent     string
	onDelta   func(Delta)
	content   strings.Builder
	reasoning strings.Builder
	calls     []openai.ToolCall
	byIndex   map[int]int // chunk index → position in calls of its latest call
	byID      map[string]int
	args      []*strings.Builder // arguments per call, joined at the end
	named     []bool             // whether the ToolName delta went out
	sigs      []string           // Gemini's thought signature per call
	finish    string
	usage     openai.Usage
	gotUsage  bool
	bounds    bounds
	text      int       // bytes of content and reasoning so far
	cut       *ReplyCut // a bound passed: nothing more is taken
}

func newAssembler(agent string, onDelta func(Delta), b bounds) *assembler {
	return &assembler{agent: agent, onDelta: onDelta, byIndex: map[int]int{}, byID: map[string]int{}, bounds: b.orDefaults()}
}

// takeText counts n more bytes of text; false once they pass the bound.
func (a *assembler) takeText(n int) bool {
	if a.text+n > a.bounds.text {
		a.cut = &ReplyCut{What: "its text", Bound: a.bounds.text}
		return false
	}
	a.text += n
	return true
}

func (a *assembler) add(chunk *wireChunk) {
	if u := chunk.usage(); u != nil {
		a.usage, a.gotUsage = *u, true
	}
	for i := range chunk.Choices {
		if a.cut != nil {
			return
		}
		ch := &chunk.Choices[i]
		if ch.Index != 0 {
			continue // we ask for one choice
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
		if r := ch.Delta.reasoning(); r != "" {
			if !a.takeText(len(r)) {
				return
			}
			a.reasoning.WriteString(r)
			a.emit(Delta{Reasoning: r})
		}
		if ch.Delta.Content != "" {
			if !a.takeText(len(ch.Delta.Content)) {
				return
			}
			a.content.WriteString(ch.Delta.Content)
			a.emit(Delta{Content: ch.Delta.Content})
		}
		for j := range ch.Delta.ToolCalls {
			if a.addCall(&ch.Delta.ToolCalls[j]); a.cut != nil {
				return
			}
		}
	}
}

func (a *assembler) addCall(tc *wireToolCall) {
	pos := a.find(tc)
	if pos < 0 {
		pos = len(a.calls)
		a.calls = append(a.calls, openai.ToolCall{Type: openai.ToolTypeFunction})
		a.args = append(a.args, &strings.Builder{})
		a.named = append(a.named, false)
		a.sigs = append(a.sigs, "")
	}
	if sig := tc.ExtraContent.signature(); sig != "" {
		a.sigs[pos] = sig
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
		call.Type = openai.ToolType(tc.Type)
	}
	// Servers that resend the whole name each chunk send the same name: keep one.
	if name := tc.Function.Name; name != "" && call.Function.Name == "" {
		call.Function.Name = name
	}
	if a.args[pos].Len()+len(tc.Function.Arguments) > a.bounds.callArgs {
		name := call.Function.Name
		if name == "" {
			name = "tool"
		}
		a.cut = &ReplyCut{What: fmt.Sprintf("the arguments of its %s call", name), Bound: a.bounds.callArgs}
		a.args[pos] = &strings.Builder{} // nothing of them is kept
		return
	}
	a.args[pos].WriteString(string(tc.Function.Arguments))
	if !a.named[pos] && call.Function.Name != "" {
		a.named[pos] = true
		a.emit(Delta{ToolName: call.Function.Name})
	}
}

// find returns the position of the call this delta continues, or -1 for a new call.
func (a *assembler) find(tc *wireToolCall) int {
	if tc.ID != "" {
		if pos, ok := a.byID[tc.ID]; ok {
			return pos
		}
	}
	pos := -1
	switch {
	case tc.Index != nil:
		p, ok := a.byIndex[*tc.Index]
		if !ok || (tc.ID != "" && a.calls[p].ID != "") {
			return -1 // a new index, or a different id on a used index
		}
		pos = p
	case tc.ID == "" && len(a.calls) > 0:
		pos = len(a.calls) - 1 // no index, no id: the call in progress, unless it is complete
	default:
		return -1
	}
	if a.startsAnother(pos, tc) {
		return -1
	}
	return pos
}

// startsAnother: a delta without an id that brings a name to a call that
// already has one starts the next call when the name differs or the call's
// arguments are already whole (a second call of the same tool).
func (a *assembler) startsAnother(pos int, tc *wireToolCall) bool {
	name, have := tc.Function.Name, a.calls[pos].Function.Name
	if tc.ID != "" || name == "" || have == "" {
		return false
	}
	if name != have {
		return true
	}
	args := a.args[pos].String()
	return args != "" && json.Valid([]byte(args))
}

func (a *assembler) emit(d Delta) {
	if a.onDelta != nil {
		d.Agent = a.agent
		a.onDelta(d)
	}
}

func (a *assembler) response() Response {
	msg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: a.content.String(),
		ReasoningContent: a.reasoning.String()}
	for i := range a.calls {
		a.calls[i].Function.Arguments = a.args[i].String()
	}
	if len(a.calls) > 0 {
		msg.ToolCalls = a.calls
	}
	return Response{Message: msg, Usage: a.usage, FinishReason: a.finish, signatures: a.sigs, Cut: a.cut}
}
