package loop

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/tools"
)

// A cut reply runs none of its calls, tells the model why in each call's
// place, and the cycle goes on: the model's next, smaller call runs.
func TestACutReplyRunsNothingAndTheModelIsTold(t *testing.T) {
	var ran atomic.Int32
	tool := funcTool{name: "write_file", run: func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		ran.Add(1)
		return tools.Result{Content: "wrote"}, nil
	}}
	cutStep := func(llm.Request) (llm.Response, error) {
		msg := openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{
			{ID: "c1", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "write_file", Arguments: `{"text":"small"}`}},
			{ID: "c2", Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: "write_file"}},
		}}
		return llm.Response{Message: msg, Cut: &llm.ReplyCut{What: "the arguments of its write_file call", Bound: 1 << 20}}, nil
	}
	m := &fakeModel{t: t, steps: []step{cutStep, calls(tc{"c3", "write_file", `{"text":"again"}`}), final("done")}}
	ev := &eventLog{}
	a := newAgent(t, AgentConfig{Model: m, OnEvent: ev.add}, tool)
	if err := a.Say(t.Context(), "write it"); err != nil {
		t.Fatal(err)
	}
	cyc, err := a.RunCycle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cyc.Final != "done" || ran.Load() != 1 {
		t.Fatalf("final %q, the tool ran %d times (want once: the call after the cut)", cyc.Final, ran.Load())
	}
	msgs := a.Messages()
	checkPairing(t, msgs)
	for _, i := range []int{2, 3} {
		if !strings.Contains(msgs[i].Content, "not run") || !strings.Contains(msgs[i].Content, "1 MiB") {
			t.Errorf("message %d does not tell the model why: %q", i, msgs[i].Content)
		}
	}
	if msgs[1].ToolCalls[1].Function.Arguments != "{}" {
		t.Errorf("the cut call kept arguments %q", msgs[1].ToolCalls[1].Function.Arguments)
	}
	var told bool
	for _, e := range ev.kinds(EventError) {
		told = told || strings.Contains(e.Err, "cut off")
	}
	if !told {
		t.Error("no error event told the person the reply was cut")
	}
}
