package team

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/uuid"
	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/tools"
)

// sentNamespace seeds the ids of messages sent by a tool call.
var sentNamespace = uuid.MustParse("6f1d2c3e-8a4b-4c5d-9e0f-a1b2c3d4e5f6")

// sentMessageID is the id of the message that agent from's tool call
// callID sends to to: fixed before the append, so that after a crash
// between the append and the record a resumed agent can find out whether
// its message arrived. Call ids are unique within a conversation.
func sentMessageID(from, callID, to string) string {
	return uuid.NewSHA1(sentNamespace, []byte(from+"\x00"+callID+"\x00"+to)).String()
}

// recoverCall answers, on resume, a send_message call of agent that a crash
// left without an answer: delivered when its message is in the recipient's
// inbox. Any other call stays interrupted.
func (ms *Messenger) recoverCall(agent string) func(openai.ToolCall) (string, bool) {
	return func(tc openai.ToolCall) (string, bool) {
		if tc.Function.Name != tools.SendMessageName {
			return "", false
		}
		var a struct {
			To string `json:"to"`
		}
		if json.Unmarshal([]byte(tc.Function.Arguments), &a) != nil || inbox.ValidateName(a.To) != nil {
			return "", false
		}
		id := sentMessageID(agent, tc.ID, a.To)
		msgs, _, err := ms.store.ReadAll(context.Background(), a.To) // the loop calls Recover without a context
		if err != nil {
			return "", false
		}
		for _, m := range msgs {
			if m.ID == id {
				return fmt.Sprintf("Message sent to %s (it was delivered just before agentteam stopped).", a.To), true
			}
		}
		return "", false
	}
}
