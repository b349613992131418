package team

import (
	"context"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// TestChatSaysAFailureOnce: the lead's model refuses a request; the loop's
// error event says so, and the chat does not say it a second time.
func TestChatSaysAFailureOnce(t *testing.T) {
	srv := fakellm.New(fakellm.Queue(map[string][]fakellm.Reply{
		"lead": {{Status: 400, Content: "the request is malformed"}, {Content: "fine now"}},
	}, nil))
	defer srv.Close()
	tm, events := chatTeam(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chat := tm.StartChat(ctx, false)
	if err := chat.Say("first"); err != nil {
		t.Fatal(err)
	}
	if e := nextAnswer(t, events); !isError(e) {
		t.Fatalf("want the failure first, got %+v", e)
	}
	if err := chat.Say("second"); err != nil {
		t.Fatal(err)
	}
	if e := nextAnswer(t, events); isError(e) || said(e) != "fine now" {
		t.Fatalf("after one failure the next event is %+v (%q), want the answer: the failure was said twice", e.Payload, said(e))
	}
}
