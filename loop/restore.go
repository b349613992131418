package loop

import (
	"slices"

	openai "github.com/sashabaranov/go-openai"
)

// restoreBudget bounds the bytes of a restored conversation kept in
// memory: once the messages read back pass it, the older half is dropped
// and summarized as compaction does. The session keeps every message.
// 4 MiB is about a million tokens, more than any model's window but the
// largest: where no window is configured, a resumed conversation's first
// request is then no larger than a window's worth (at 16 MiB it was up to
// 12.7 MB, refused whole by every server before compaction could learn
// the window). (A variable for the tests.)
var restoreBudget = 4 << 20

// restored is a conversation read back from its session.
type restored struct {
	msgs []openai.ChatCompletionMessage
	// seen and callIDs cover every message read, dropped ones too.
	seen, callIDs map[string]bool
	dropped       int // messages left out of msgs, summarized
}

// view builds a restored conversation line by line within restoreBudget.
type view struct {
	r     restored
	head  []openai.ChatCompletionMessage // the first user message (the task)
	tail  []openai.ChatCompletionMessage
	bytes int
	note  string // the summary of what was dropped so far
}

func newView() *view {
	return &view{r: restored{seen: map[string]bool{}, callIDs: map[string]bool{}}}
}

func (v *view) line(line []byte) {
	m, ok := parseSessionLine(line)
	if !ok {
		return
	}
	markSeen(v.r.seen, m)
	for _, tc := range m.ToolCalls {
		v.r.callIDs[tc.ID] = true
	}
	if v.head == nil && len(v.tail) == 0 && v.note == "" && m.Role == openai.ChatMessageRoleUser {
		v.head = []openai.ChatCompletionMessage{m}
		return
	}
	v.tail = append(v.tail, m)
	v.bytes += estimateMessage(m) * 4
	if v.bytes > restoreBudget {
		v.shed()
	}
}

// shed drops the older half of the tail into the summary; the tail then
// starts at a message that is not a tool answer.
func (v *view) shed() {
	cut := len(v.tail) / 2
	for cut < len(v.tail)-1 && v.tail[cut].Role == openai.ChatMessageRoleTool {
		cut++
	}
	if cut == 0 {
		return
	}
	dropped := v.tail[:cut]
	if v.note != "" {
		dropped = append([]openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: v.note}}, dropped...)
	}
	v.r.dropped += cut
	v.note = summarizeCount(dropped, v.r.dropped)
	v.tail = slices.Clone(v.tail[cut:]) // the dropped messages' memory goes
	v.bytes = 0
	for _, m := range v.tail {
		v.bytes += estimateMessage(m) * 4
	}
}

func (v *view) done() *restored {
	msgs := append([]openai.ChatCompletionMessage(nil), v.head...)
	if v.note != "" {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: v.note})
	}
	v.r.msgs = append(msgs, v.tail...)
	return &v.r
}
