package loop

import openai "github.com/sashabaranov/go-openai"

// compactedNote stands where earlier messages were dropped.
const compactedNote = "[earlier conversation compacted]"

// compact drops the older half of the conversation, keeping the first user
// message (the task) and a tail that starts at a user message, or at least
// not at a tool message, so no tool answer loses its call. The session file
// keeps everything; only the model's view shrinks. It returns how many
// messages were dropped.
func (a *Agent) compact() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	msgs := a.msgs
	if len(msgs) < 4 {
		return 0
	}
	head := 0
	if msgs[0].Role == openai.ChatMessageRoleUser {
		head = 1
	}
	start := tailStart(msgs, max(head+1, len(msgs)/2))
	if start <= head {
		return 0
	}
	out := make([]openai.ChatCompletionMessage, 0, len(msgs)-start+head+1)
	out = append(out, msgs[:head]...)
	out = append(out, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: compactedNote})
	out = append(out, msgs[start:]...)
	a.msgs = out
	return start - head
}

// tailStart finds where the kept tail begins: a user message at or after
// from if there is one, else the nearest message that is not a tool answer
// (forwards, then backwards); 0 if there is none.
func tailStart(msgs []openai.ChatCompletionMessage, from int) int {
	for i := from; i < len(msgs); i++ {
		if msgs[i].Role == openai.ChatMessageRoleUser {
			return i
		}
	}
	for i := from; i < len(msgs); i++ {
		if msgs[i].Role != openai.ChatMessageRoleTool {
			return i
		}
	}
	for i := min(from, len(msgs)) - 1; i > 0; i-- {
		if msgs[i].Role != openai.ChatMessageRoleTool {
			return i
		}
	}
	return 0
}
