package loop

import (
	"context"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/tools"
)

// maxParallelCalls bounds the tool calls of one turn that run at once.
const maxParallelCalls = 8

// cancelled answers a tool call that never ran because the cycle was cancelled.
var cancelled = tools.Errorf("cancelled before this tool call ran")

// cancelledResult is its text in the conversation.
var cancelledResult = cancelled.Content

// runTools runs one turn's tool calls and records one answer per call, in
// the calls' order, whatever happens; maximal runs of consecutive parallel
// tools run concurrently. Then each result's AfterRecord runs.
func (a *Agent) runTools(ctx context.Context, turn int, calls []openai.ToolCall) error {
	set := a.conv.currentTools()
	results := make([]tools.Result, len(calls))
	ran := make([]bool, len(calls))
	for i := 0; i < len(calls) && ctx.Err() == nil; {
		j := i
		for j < len(calls) && parallel(set, calls[j].Function.Name) {
			j++
		}
		if j-i < 2 {
			j = i + 1
		}
		for _, tc := range calls[i:j] {
			a.emit(Event{Kind: EventToolStart, Turn: turn, Tool: tc.Function.Name, Args: tc.Function.Arguments})
		}
		if j-i == 1 {
			results[i], ran[i] = call(ctx, set, calls[i]), true
		} else {
			runGroup(ctx, set, calls[i:j], results[i:j], ran[i:j])
		}
		i = j
	}
	answers := make([]openai.ChatCompletionMessage, len(calls))
	for k, tc := range calls {
		if !ran[k] {
			results[k] = cancelled
		}
		answers[k] = toolMessage(tc.ID, results[k].Content)
	}
	recErr := a.conv.record(ctx, answers...)
	for k, tc := range calls {
		a.emit(Event{Kind: EventToolCall, Turn: turn, Tool: tc.Function.Name, Args: tc.Function.Arguments,
			Result: answers[k].Content, IsError: results[k].IsError, Diff: results[k].Diff})
	}
	if recErr != nil {
		return sourced(SourceSession, recErr) // not recorded: committing inbox reads now could lose messages
	}
	for k, tc := range calls {
		if after := results[k].AfterRecord; after != nil {
			if err := after(); err != nil {
				a.emit(Event{Kind: EventError, Turn: turn, Tool: tc.Function.Name, Err: err.Error(), Source: SourceInbox})
			}
		}
	}
	return ctx.Err()
}

func parallel(set *tools.Set, name string) bool { return set != nil && set.Parallel(name) }

func call(ctx context.Context, set *tools.Set, tc openai.ToolCall) tools.Result {
	if set == nil {
		return tools.Errorf("no tools are available")
	}
	return set.Call(tools.WithCallID(ctx, tc.ID), tc.Function.Name, tc.Function.Arguments)
}

// runGroup runs calls concurrently, at most maxParallelCalls at once; a call
// not yet started when ctx ends is left unran.
func runGroup(ctx context.Context, set *tools.Set, calls []openai.ToolCall, results []tools.Result, ran []bool) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxParallelCalls)
	for k := range calls {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			results[k], ran[k] = call(ctx, set, calls[k]), true
		}()
	}
	wg.Wait()
}

var _ tools.InboxReader = (*Agent)(nil)
