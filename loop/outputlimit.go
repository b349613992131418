package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/loop/llm"
)

// ErrOutputLimit ends a cycle whose reply was cut off at the output limit in
// the middle of its tool calls: their arguments are incomplete, so none runs.
var ErrOutputLimit = errors.New("the model's reply reached its output limit in the middle of a tool call, so no tool call of that turn ran: raise max_output_tokens in the provider's config, or ask for smaller steps")

// outputLimitAnswer tells the model, in place of each call's result, why it did not run.
const outputLimitAnswer = "error: not run: your reply reached the output limit and was cut off in the middle of its tool calls, so none of them ran; make the calls again with shorter arguments (write a long file in parts)"

// ErrContentFilter ends a cycle whose reply the server's content filter
// stopped (Azure's finish_reason "content_filter"): the text is cut, so it
// is not an answer, and no tool call of it runs.
var ErrContentFilter = errors.New("the model server's content filter stopped the reply (finish_reason \"content_filter\"), so it is not used as an answer and none of its tool calls ran: rephrase the request, or ask whoever runs the server about its content filter")

// contentFilterAnswer tells the model why its calls did not run.
const contentFilterAnswer = "error: not run: the server's content filter stopped your reply, so none of its tool calls ran"

// cutOff records a reply that was cut off (at the output limit, or by a
// content filter) with every call answered unrun, so that the conversation
// stays valid and the model reads why, and ends the cycle with why.
func (a *Agent) cutOff(ctx context.Context, turn int, msg openai.ChatCompletionMessage, why error, answer string) error {
	recErr := a.answerUnrun(ctx, turn, msg, answer)
	a.emit(Event{Kind: EventError, Turn: turn, Err: why.Error(), Source: SourceModel})
	return errors.Join(told(SourceModel, why), sourced(SourceSession, recErr))
}

// answerUnrun records msg with each of its calls answered, unrun, by answer.
func (a *Agent) answerUnrun(ctx context.Context, turn int, msg openai.ChatCompletionMessage, answer string) error {
	answers := make([]openai.ChatCompletionMessage, 0, len(msg.ToolCalls)+1)
	answers = append(answers, msg)
	for _, tc := range msg.ToolCalls {
		answers = append(answers, toolMessage(tc.ID, answer))
	}
	recErr := a.conv.record(ctx, answers...)
	for _, tc := range msg.ToolCalls {
		a.emit(Event{Kind: EventToolCall, Turn: turn, Tool: tc.Function.Name, Args: tc.Function.Arguments,
			Result: answer, IsError: true})
	}
	return recErr
}

// replyCut records a reply that passed a bound (see ReplyCut) and tells the
// person. Its calls are answered unrun and the cycle goes on, so the model
// can try smaller ones; a reply of text alone ends the cycle with what
// was kept and a line saying it was cut.
func (a *Agent) replyCut(ctx context.Context, turn int, msg openai.ChatCompletionMessage, resp llm.Response) (final string, done bool, err error) {
	a.emit(Event{Kind: EventReply, Turn: turn, Result: msg.Content, Usage: resp.Usage, Reasoning: msg.ReasoningContent})
	a.emit(Event{Kind: EventError, Turn: turn, Err: resp.Cut.Sentence(), Source: SourceModel})
	if len(msg.ToolCalls) > 0 {
		return "", false, sourced(SourceSession, a.answerUnrun(ctx, turn, msg, resp.Cut.Answer()))
	}
	if said := "(" + resp.Cut.Sentence() + ")"; msg.Content != said {
		msg.Content += "\n\n" + said
	}
	return msg.Content, true, sourced(SourceSession, a.conv.record(ctx, msg))
}

// keepCut makes a cut reply fit to record: the call that passed its bound
// keeps no arguments, and an empty reply says it was cut.
func keepCut(msg *openai.ChatCompletionMessage, cut *llm.ReplyCut) {
	if msg.Content == "" && len(msg.ToolCalls) == 0 {
		msg.Content = "(" + cut.Sentence() + ")"
	}
	for i := range msg.ToolCalls {
		if !validJSONObject(msg.ToolCalls[i].Function.Arguments) {
			msg.ToolCalls[i].Function.Arguments = "{}"
		}
	}
}

// validJSONObject: args is one whole JSON object.
func validJSONObject(args string) bool {
	b := bytes.TrimSpace([]byte(args))
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}
