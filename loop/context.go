package loop

import (
	"errors"

	"github.com/agentteam/agentteam/loop/llm"
)

// ErrContextFull ends a cycle whose conversation could not be made to fit.
var ErrContextFull = errors.New("the conversation does not fit the model's context window even compacted to its task and last turn: use a model with a larger window, or start a new conversation")

// window is what an agent knows of its model's context: the window's size
// (configured, or learned from the server's refusal), the tokens to leave
// for the reply, and how many tokens a byte of request is, measured from
// the servers' usage.
type window struct {
	size    int     // 0: not known
	reserve int     // tokens kept free for the reply; 0: a quarter of the window
	ratio   float64 // tokens per estimated token; 0: not measured yet
}

// target is how many tokens a request may have.
func (w window) target() int {
	reserve := w.reserve
	if reserve <= 0 || reserve > w.size/2 {
		reserve = w.size / 4
	}
	return w.size - reserve
}

// replyTarget is how many tokens a request may have in w: with the usual
// room for the reply, or, where the system prompt, the tools and the task
// (least) leave less, with the least room a reply can have.
func (w window) replyTarget(least int) int {
	if least > w.target() {
		return w.tightTarget()
	}
	return w.target()
}

// tightTarget is the last try: the window less the least room a reply can
// have (a tool call or a short answer).
func (w window) tightTarget() int {
	return w.size - max(128, w.size/32)
}

// learn takes what a refusal said of the window.
func (w *window) learn(c *llm.ContextError, estimate int) {
	if c.Window > 0 {
		w.size = c.Window
	}
	if c.Prompt > 0 && estimate > 0 {
		w.ratio = float64(c.Prompt) / float64(estimate)
	}
}

// measure takes the prompt tokens a server counted for a request of estimate.
func (w *window) measure(prompt, estimate int) {
	if prompt > 0 && estimate > 0 {
		w.ratio = float64(prompt) / float64(estimate)
	}
}

// full reports whether a reply that ended at "length" stopped at the end of
// the context window rather than at an output limit.
func (w window) full(prompt, completion int) bool {
	return w.size > 0 && prompt+completion >= w.size-max(16, w.size/100)
}

// tokens is the window's estimate of est, scaled by what servers counted.
func (w window) tokens(est int) int {
	if w.ratio > 0 {
		return int(float64(est)*w.ratio) + 1
	}
	return est
}
