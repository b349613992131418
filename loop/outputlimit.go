package loop

import (
	"errors"

	openai "github.com/sashabaranov/go-openai"
)

// ErrOutputLimit ends a cycle whose reply was cut off at the output limit in
// the middle of its tool calls: their arguments are incomplete, so none runs.
var ErrOutputLimit = errors.New("the model's reply reached its output limit in the middle of a tool call, so no tool call of that turn ran: raise max_output_tokens in the provider's config, or ask for smaller steps")

// outputLimitAnswer tells the model, in place of each call's result, why it did not run.
const outputLimitAnswer = "error: not run: your reply reached the output limit and was cut off in the middle of its tool calls, so none of them ran; make the calls again with shorter arguments (write a long file in parts)"

// cutOff records a reply cut at the output limit, every call answered
// unrun, so that the conversation stays valid and the model reads why.
func (a *Agent) cutOff(turn int, msg openai.ChatCompletionMessage) error {
	answers := make([]openai.ChatCompletionMessage, 0, len(msg.ToolCalls)+1)
	answers = append(answers, msg)
	for _, tc := range msg.ToolCalls {
		answers = append(answers, toolMessage(tc.ID, outputLimitAnswer))
	}
	recErr := a.record(answers...)
	for _, tc := range msg.ToolCalls {
		a.emit(Event{Kind: EventToolCall, Turn: turn, Tool: tc.Function.Name, Args: tc.Function.Arguments,
			Result: outputLimitAnswer, IsError: true})
	}
	a.emit(Event{Kind: EventError, Turn: turn, Err: ErrOutputLimit.Error(), Source: SourceModel})
	return errors.Join(told(SourceModel, ErrOutputLimit), sourced(SourceSession, recErr))
}
