package loop

import (
	"context"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// TestAStopHookKeepsTheCycleGoingBoundedly: a reason sends the model back
// to work with it; one that never lets go is heard MaxStopContinues times
// and then the cycle ends with the model's last reply.
func TestAStopHookKeepsTheCycleGoingBoundedly(t *testing.T) {
	m := &fakeModel{t: t, steps: []step{final("done")}}
	var agains []bool
	a := newAgent(t, AgentConfig{Model: m, OnStop: func(_ context.Context, final string, again bool) string {
		agains = append(agains, again)
		return "a Stop hook says: the tests fail"
	}})
	_ = a.Say(t.Context(), "work")
	cyc, err := a.RunCycle(context.Background())
	if err != nil || cyc.Final != "done" {
		t.Fatalf("cycle %+v, err %v", cyc, err)
	}
	if n := len(m.requests()); n != MaxStopContinues+1 {
		t.Errorf("the model was asked %d times, want %d", n, MaxStopContinues+1)
	}
	if len(agains) != MaxStopContinues || agains[0] || !agains[1] {
		t.Errorf("OnStop saw again = %v", agains)
	}
	msgs := a.Messages()
	told := 0
	for _, msg := range msgs {
		if msg.Role == openai.ChatMessageRoleUser && strings.Contains(msg.Content, "You may not end your turn yet: a Stop hook says: the tests fail") {
			told++
		}
	}
	if told != MaxStopContinues {
		t.Errorf("the model was told the reason %d times:\n%s", told, dump(msgs))
	}
	checkPairing(t, msgs)
}

// TestAStopHookThatLetsGoEndsTheCycle: no reason, no second request.
func TestAStopHookThatLetsGoEndsTheCycle(t *testing.T) {
	m := &fakeModel{t: t, steps: []step{final("done")}}
	a := newAgent(t, AgentConfig{Model: m, OnStop: func(context.Context, string, bool) string { return "" }})
	_ = a.Say(t.Context(), "work")
	if cyc, err := a.RunCycle(context.Background()); err != nil || cyc.Final != "done" || len(m.requests()) != 1 {
		t.Errorf("cycle %+v, err %v, %d requests", cyc, err, len(m.requests()))
	}
}
