package loop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentteam/agentteam/loop/llm"
	"github.com/agentteam/agentteam/tools"
)

// TestOutputLimitRunsNoCallAndTellsTheModel: a reply cut at the output limit
// in the middle of its tool calls runs none of them; each is answered with
// why, so the conversation stays valid and the model reads it next time.
func TestOutputLimitRunsNoCallAndTellsTheModel(t *testing.T) {
	cut := func(req llm.Request) (llm.Response, error) {
		r, err := calls(tc{"c1", "echo", `{"text":"a"}`}, tc{"c2", "echo", `{"text":"a lo`})(req)
		r.FinishReason = "length"
		return r, err
	}
	m := &fakeModel{t: t, steps: []step{cut, final("done")}}
	var ran atomic.Int32
	echoed := echo("echo", false)
	counting := funcTool{name: "echo", run: func(ctx context.Context, args json.RawMessage) (tools.Result, error) {
		ran.Add(1)
		return echoed.run(ctx, args)
	}}
	ev := &eventLog{}
	a := newAgent(t, AgentConfig{Model: m, OnEvent: ev.add}, counting)
	if err := a.Say(t.Context(), "write it"); err != nil {
		t.Fatal(err)
	}
	_, err := a.RunCycle(context.Background())
	if !errors.Is(err, ErrOutputLimit) || SourceOf(err) != SourceModel || !strings.Contains(err.Error(), "max_output_tokens") {
		t.Fatalf("err %v (source %q)", err, SourceOf(err))
	}
	if ran.Load() != 0 {
		t.Errorf("%d tool calls of the cut turn ran", ran.Load())
	}
	msgs := a.Messages()
	checkPairing(t, msgs)
	if len(msgs) != 4 || !strings.Contains(msgs[2].Content, "output limit") || !strings.Contains(msgs[3].Content, "output limit") {
		t.Errorf("conversation:\n%s", dump(msgs))
	}
	if errs := ev.kinds(EventError); len(errs) != 1 || errs[0].Source != SourceModel {
		t.Errorf("error events %+v", errs)
	}
	// The next cycle goes on from a valid conversation.
	if err := a.Say(t.Context(), "try again in parts"); err != nil {
		t.Fatal(err)
	}
	if cyc, err := a.RunCycle(context.Background()); err != nil || cyc.Final != "done" {
		t.Fatalf("next cycle %+v %v", cyc, err)
	}
}
