package loop

import (
	"crypto/rand"

	openai "github.com/sashabaranov/go-openai"
)

// callIDAlphabet: made-up tool call ids are 9 letters and digits, the one
// form that every server accepts (some Mistral deployments insist on it).
const callIDAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// newCallID is a random tool call id of 9 letters and digits.
func newCallID() string {
	var b [9]byte
	_, _ = rand.Read(b[:]) // never fails on a supported platform
	for i := range b {
		b[i] = callIDAlphabet[int(b[i])%len(callIDAlphabet)]
	}
	return string(b[:])
}

// uniqueCallIDs gives every tool call of msg an id not used before in the
// conversation (used holds those ids and is updated): what a call writes
// is keyed by its id, and some servers number calls from 1 in every
// response. The caller holds a.mu.
func uniqueCallIDs(used map[string]bool, msg *openai.ChatCompletionMessage) {
	for i := range msg.ToolCalls {
		tc := &msg.ToolCalls[i]
		for tc.ID == "" || used[tc.ID] {
			tc.ID = newCallID()
		}
		used[tc.ID] = true
	}
}
