package llm

import "crypto/rand"

// callIDAlphabet: made-up tool call ids are 9 letters and digits, the one
// form that every server accepts (some Mistral deployments insist on it).
const callIDAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// NewCallID is a random tool call id of 9 letters and digits.
func NewCallID() string {
	var b [9]byte
	_, _ = rand.Read(b[:]) // never fails on a supported platform
	for i := range b {
		b[i] = callIDAlphabet[int(b[i])%len(callIDAlphabet)]
	}
	return string(b[:])
}
