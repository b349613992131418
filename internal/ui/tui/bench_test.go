package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/tui/poll"
	"github.com/agentteam/agentteam/team/event"
)

// benchModel has 5,000 conversation entries, 50 teammates and a full feed.
func benchModel(b *testing.B) *harness {
	hs := newHarness(b, 200, 60, Options{HasModel: true, Auto: true, MaxWorkers: 5})
	var ms []string
	for i := 0; i < 50; i++ {
		ms = append(ms, fmt.Sprintf("mate%02d:%s", i, []string{"working", "idle", "queued"}[i%3]))
	}
	hs.send(members(ms...))
	var feed []inbox.Message
	for i := 0; i < poll.MaxFeed; i++ {
		feed = append(feed, inbox.Message{From: "mate01", To: "lead", Type: "result", Content: "report line"})
	}
	hs.send(poll.Feed{Msgs: feed})
	for i := 0; i < 5000; i++ {
		switch i % 4 {
		case 0:
			hs.m.lead.add(&entry{kind: entryUser, text: fmt.Sprintf("question %d", i)})
		case 1:
			hs.m.lead.add(&entry{kind: entryTool, tool: "bash", arg: "go test ./...", done: true})
		case 2:
			hs.m.lead.add(&entry{kind: entryReport, who: "mate07", typ: "lead (result)", text: "done: " + strings.Repeat("word ", 30)})
		default:
			hs.m.lead.add(&entry{kind: entryReply, who: "lead", text: "## Answer\n\nSome **markdown** with `code`.\n\n- one\n- two"})
		}
	}
	hs.view() // the first frame renders the visible entries once
	return hs
}

func BenchmarkView(b *testing.B) {
	hs := benchModel(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = hs.m.View()
	}
}

// BenchmarkViewStreaming is a frame per flushed delta of a long streaming reply.
func BenchmarkViewStreaming(b *testing.B) {
	hs := benchModel(b)
	hs.send(deltas("lead", false, "# Streaming\n\n"+strings.Repeat("a settled paragraph of text. ", 20)+"\n\n"))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hs.send(deltas("lead", false, "token "))
		if i%50 == 49 {
			hs.send(deltas("lead", false, "\n\n")) // a paragraph settles now and then
		}
		_ = hs.m.View()
	}
}

// BenchmarkNewEvent is a frame after a teammate's report arrives.
func BenchmarkViewAfterReport(b *testing.B) {
	hs := benchModel(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		hs.send(events(event.Event{Payload: event.MessageDelivered{From: "mate03", To: "lead", Type: "result", Content: "report **done**"}}))
		_ = hs.m.View()
	}
}
