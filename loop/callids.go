package loop

import (
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/loop/llm"
)

// uniqueCallIDs gives every tool call of msg an id not used before in the
// conversation (used holds those ids and is updated): what a call writes
// is keyed by its id, and some servers number calls from 1 in every
// response. The caller holds the conversation's lock.
func uniqueCallIDs(used map[string]bool, msg *openai.ChatCompletionMessage) {
	for i := range msg.ToolCalls {
		tc := &msg.ToolCalls[i]
		for tc.ID == "" || used[tc.ID] {
			tc.ID = llm.NewCallID()
		}
		used[tc.ID] = true
	}
}
