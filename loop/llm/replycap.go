package llm

import "fmt"

// Bounds on what one reply of a model may bring, enforced while it
// streams: past one, agentteam stops reading, so a reply of any size costs
// at most about the bound in memory, and nothing of it runs.
const (
	// DefaultMaxCallArgs bounds the arguments of one tool call.
	DefaultMaxCallArgs = 1 << 20
	// DefaultMaxReplyText bounds a reply's text and reasoning together.
	DefaultMaxReplyText = 4 << 20
)

// ReplyCut says which bound a reply passed; its stream was read no further.
type ReplyCut struct {
	What  string // "the arguments of its write_file call", "its text"…
	Bound int    // bytes
}

// Sentence is what the person reads.
func (c *ReplyCut) Sentence() string {
	return fmt.Sprintf("the model's reply was cut off: %s passed agentteam's bound of %s, so nothing of that reply ran", c.What, byteSize(c.Bound))
}

// Answer is what the model reads in place of each tool call's result.
func (c *ReplyCut) Answer() string {
	return fmt.Sprintf("error: not run: your reply was cut off because %s passed the bound of %s (agentteam stopped reading it there), so no tool call of that reply ran; make the calls again in smaller pieces (write a long file in parts)", c.What, byteSize(c.Bound))
}

// byteSize is n as people read it.
func byteSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// bounds are a client's limits on one reply.
type bounds struct {
	callArgs, text int
}

func (b bounds) orDefaults() bounds {
	if b.callArgs <= 0 {
		b.callArgs = DefaultMaxCallArgs
	}
	if b.text <= 0 {
		b.text = DefaultMaxReplyText
	}
	return b
}

// line bounds one line or event of a stream: a tool call's arguments and
// the reply's text could both be in it, escaped, with room for the JSON.
func (b bounds) line() int { return 2*(b.callArgs+b.text) + 64<<10 }
