package loop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/tools"
)

// RunCycle runs model turns until a reply without tool calls, the turn
// limit (ErrTurnLimit), or an error. Unread inbox messages are taken in
// before every turn.
func (a *Agent) RunCycle(ctx context.Context) (cyc Cycle, err error) {
	if !a.conv.start() {
		return Cycle{}, ErrCycleRunning
	}
	defer func() {
		if endErr := a.conv.end(ctx); endErr != nil {
			err = errors.Join(err, sourced(SourceSession, endErr))
		}
	}()
	return a.cycle(ctx)
}

// takeIn takes what is pending and unread into the conversation before a
// turn; a read that ctx stopped is ctx's error, not the inbox's.
func (a *Agent) takeIn(ctx context.Context, turn int) error {
	err := errors.Join(a.conv.takePending(ctx), a.in.take(ctx))
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return ctx.Err()
	}
	a.emit(Event{Kind: EventError, Turn: turn, Err: err.Error(), Source: SourceInbox})
	return told(SourceInbox, err)
}

func (a *Agent) cycle(ctx context.Context) (Cycle, error) {
	var cyc Cycle
	stops := 0 // times OnStop kept this cycle going
	for turn := 1; turn <= a.maxTurns; turn++ {
		if err := ctx.Err(); err != nil {
			return cyc, err
		}
		if err := a.takeIn(ctx, turn); err != nil {
			return cyc, err
		}
		if turn == 1 && !a.conv.hasNews() {
			return cyc, ErrNothingToDo
		}
		if turn == 1 {
			a.readInstructions()
		}
		a.emit(Event{Kind: EventTurn, Turn: turn})
		resp, err := a.callModel(ctx, turn)
		if err != nil {
			if ctx.Err() != nil {
				// Stopped on purpose: not an error to report. What streamed
				// stays the reply, so the conversation reads as it happened.
				if text := strings.TrimSpace(resp.Message.Content); text != "" {
					if recErr := a.conv.record(ctx, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text + "\n\n" + InterruptedMark}); recErr != nil {
						return cyc, errors.Join(ctx.Err(), sourced(SourceSession, recErr))
					}
				}
				return cyc, ctx.Err()
			}
			a.emit(Event{Kind: EventError, Turn: turn, Err: err.Error(), Source: SourceModel})
			return cyc, told(SourceModel, err)
		}
		cyc.Turns = turn
		cyc.Usage = sumUsage(cyc.Usage, resp.Usage)
		a.conv.addUsage(resp.Usage)
		msg := resp.Message
		msg.Role = openai.ChatMessageRoleAssistant
		if resp.Cut != nil {
			keepCut(&msg, resp.Cut)
		}
		if msg.Content == "" && len(msg.ToolCalls) == 0 {
			// An empty reply would make the next request invalid (an
			// assistant message needs content or tool calls).
			msg.Content = "(no reply)"
		}
		a.conv.claimCallIDs(&msg)
		if resp.Cut != nil {
			final, done, err := a.replyCut(ctx, turn, msg, resp)
			if done || err != nil {
				cyc.Final = final
				return cyc, err
			}
			continue
		}
		cutCall := len(msg.ToolCalls) > 0 || resp.Message.Content == "" || strings.Contains(resp.Message.Content, "<tool_call>")
		switch {
		case resp.FinishReason == string(openai.FinishReasonLength) && cutCall:
			// Calls cut mid-way, or a reply cut before its call could be
			// parsed (llama.cpp streams nothing of a call it holds back).
			a.emit(Event{Kind: EventReply, Turn: turn, Result: msg.Content, Usage: resp.Usage, Reasoning: msg.ReasoningContent})
			return cyc, a.cutOff(ctx, turn, msg, ErrOutputLimit, outputLimitAnswer)
		case resp.FinishReason == string(openai.FinishReasonContentFilter):
			a.emit(Event{Kind: EventReply, Turn: turn, Result: msg.Content, Usage: resp.Usage, Reasoning: msg.ReasoningContent})
			return cyc, a.cutOff(ctx, turn, msg, ErrContentFilter, contentFilterAnswer)
		}
		recErr := sourced(SourceSession, a.conv.record(ctx, msg))
		a.emit(Event{Kind: EventReply, Turn: turn, Result: msg.Content, Usage: resp.Usage, Reasoning: msg.ReasoningContent})
		if len(msg.ToolCalls) == 0 {
			cyc.Final = msg.Content
			if recErr != nil || a.onStop == nil || stops >= MaxStopContinues || ctx.Err() != nil {
				return cyc, recErr
			}
			reason := a.onStop(ctx, msg.Content, stops > 0)
			if reason == "" {
				return cyc, nil
			}
			if err := ctx.Err(); err != nil {
				return cyc, err
			}
			stops++
			if err := a.conv.record(ctx, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: stopMessage(reason)}); err != nil {
				return cyc, sourced(SourceSession, err)
			}
			continue
		}
		if recErr != nil && (ctx.Err() != nil || fenced(recErr)) {
			// Stopped, or the conversation goes on elsewhere (a respawn
			// claimed it): its tools must not run here.
			return cyc, recErr
		}
		if err := errors.Join(recErr, a.runTools(ctx, turn, msg.ToolCalls)); err != nil {
			return cyc, err
		}
	}
	cyc.Final = fmt.Sprintf("stopped after %d turns", a.maxTurns)
	return cyc, ErrTurnLimit
}

// stopMessage tells the model why it may not stop yet.
func stopMessage(reason string) string {
	return "You may not end your turn yet: " + reason + "\nDo what it asks, then answer again."
}

// InterruptedMark ends a reply kept as far as it streamed when its turn
// was interrupted.
const InterruptedMark = "(interrupted)"

// callModel makes one turn. A request the server refuses as longer than
// the context window, or a reply cut at the window's end, compacts the
// conversation to leave room for the reply and asks again, twice at most.
// A call its context ended answers with the text streamed so far.
func (a *Agent) callModel(ctx context.Context, turn int) (llm.Response, error) {
	var mu sync.Mutex
	var streamed strings.Builder
	for try := 0; ; try++ {
		req := a.conv.request(a.name, a.onDelta)
		show := req.OnDelta
		req.OnDelta = func(d llm.Delta) {
			mu.Lock()
			if d.Restart {
				streamed.Reset()
			}
			streamed.WriteString(d.Content)
			mu.Unlock()
			if show != nil {
				show(d)
			}
		}
		if w := a.conv.window(); try == 0 && w.size > 0 && w.tokens(estimateRequest(req)) > w.replyTarget(a.conv.leastTokens()) {
			// Known not to fit with room for the reply: compact before asking.
			if dropped, _ := a.conv.compactForReply(); dropped > 0 {
				a.emit(Event{Kind: EventCompacted, Turn: turn, Dropped: dropped})
				req = a.conv.request(a.name, a.onDelta)
			}
		}
		resp, err := a.model.Complete(ctx, req)
		if err != nil && ctx.Err() != nil {
			mu.Lock()
			resp = llm.Response{Message: openai.ChatCompletionMessage{Content: streamed.String()}}
			mu.Unlock()
			return resp, err
		}
		full := err == nil && resp.FinishReason == string(openai.FinishReasonLength) &&
			a.conv.window().full(resp.Usage.PromptTokens, resp.Usage.CompletionTokens)
		if err == nil && !full {
			a.conv.measure(resp.Usage.PromptTokens, req)
			return resp, nil
		}
		if !full && !errors.Is(err, llm.ErrContextLength) {
			return resp, err
		}
		if try == 2 {
			if full {
				return resp, ErrContextFull
			}
			return resp, fmt.Errorf("%w (%w)", ErrContextFull, err)
		}
		var ce *llm.ContextError
		if errors.As(err, &ce) {
			a.conv.learnWindow(ce, req)
		} else if full {
			a.conv.measure(resp.Usage.PromptTokens, req)
		}
		dropped, ok := a.conv.compactForReply()
		if dropped == 0 && !ok {
			if err == nil {
				return resp, ErrContextFull
			}
			return resp, fmt.Errorf("%w (%w)", ErrContextFull, err)
		}
		a.emit(Event{Kind: EventCompacted, Turn: turn, Dropped: dropped})
	}
}

// estimateRequest is the request's size in unscaled tokens.
func estimateRequest(req llm.Request) int {
	n := tools.DefinitionBytes(req.Tools) / 4
	for _, m := range req.Messages {
		n += estimateMessage(m)
	}
	return n
}

// readInstructions takes the cycle's instructions (AgentConfig.Instructions).
func (a *Agent) readInstructions() {
	if a.instructions == nil {
		return
	}
	a.conv.setExtra(a.instructions())
}

// fenced reports whether err is a session store's refusal of a writer
// whose conversation another writer claimed (natsstore.FencedError).
func fenced(err error) bool {
	var f interface{ Fenced() bool }
	return errors.As(err, &f) && f.Fenced()
}
