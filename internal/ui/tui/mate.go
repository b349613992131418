package tui

import (
	"strings"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/internal/ui/tui/atpath"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/tools"
)

// convMsg is a teammate's conversation, read by a job.
type convMsg struct {
	name string
	msgs []openai.ChatCompletionMessage
	ok   bool
}

// mateView is the focused teammate's conversation, read-only. Conversations
// only grow (until compacted), so only new messages become entries.
type mateView struct {
	name    string
	pane    *convPane
	seen    int               // messages already turned into entries
	calls   map[string]*entry // tool call id → its entry, to mark the result
	loading bool              // a read is under way
	stale   bool              // something changed during the read: read again
	missing bool
	// diffOf is the diff of one of this teammate's writes, by its
	// arguments; false when this screen did not see it made.
	diffOf func(args string) (shownDiff, bool)
	// branch is the worktree teammate's branch diff, first in the pane (branchdiff.go).
	branch branchView
}

func newMateView(name string, diffOf func(args string) (shownDiff, bool)) *mateView {
	v := &mateView{name: name, pane: newConvPane(), calls: map[string]*entry{}, diffOf: diffOf}
	v.pane.add(&entry{kind: entryNote, text: name + "'s conversation, read-only. What you type goes to " + name + "'s inbox."})
	return v
}

// update appends what is new in msgs.
func (v *mateView) update(msgs []openai.ChatCompletionMessage, ok bool) {
	v.loading = false
	if !ok {
		if !v.missing {
			v.missing = true
			v.pane.add(&entry{kind: entryNote, text: v.name + " is not run by this agentteam process, so its conversation is not here; it is kept in .agentteam/sessions/" + v.name + ".jsonl, or on a NATS store in the team's session stream."})
		}
		return
	}
	if len(msgs) < v.seen { // compacted: start over
		v.pane.clear()
		v.seen, v.calls = 0, map[string]*entry{}
		if v.branch.e != nil {
			v.placeBranch()
		}
	}
	if len(msgs) == v.seen {
		return
	}
	// The streamed text is now in the conversation.
	if e := v.pane.stream; e != nil {
		v.pane.remove(e)
		v.pane.stream = nil
	}
	for _, msg := range msgs[v.seen:] {
		v.add(msg)
	}
	v.seen = len(msgs)
}

func (v *mateView) add(msg openai.ChatCompletionMessage) {
	switch msg.Role {
	case openai.ChatMessageRoleUser:
		if im, ok := loop.ParseMessageFrame(msg.Content); ok {
			text, attached := atpath.Split(im.Content)
			v.pane.add(&entry{kind: entryReport, who: im.From, typ: v.name + " (" + string(im.Type) + ")", text: text})
			if len(attached) > 0 {
				v.pane.add(&entry{kind: entryNote, text: strings.Join(attached, "\n")})
			}
			return
		}
		who := v.name
		if who == inbox.LeadName {
			who = "" // the person talking to the lead
		}
		text, attached := atpath.Split(msg.Content)
		v.pane.add(&entry{kind: entryUser, who: who, text: text})
		if len(attached) > 0 {
			v.pane.add(&entry{kind: entryNote, text: strings.Join(attached, "\n")})
		}
	case openai.ChatMessageRoleAssistant:
		if strings.TrimSpace(msg.Content) != "" || strings.TrimSpace(msg.ReasoningContent) != "" {
			v.pane.add(&entry{kind: entryReply, who: v.name, text: msg.Content, reasoning: msg.ReasoningContent})
		}
		for _, tc := range msg.ToolCalls {
			e := &entry{kind: entryTool, tool: tc.Function.Name, arg: engine.KeyArg(tc.Function.Name, tc.Function.Arguments)}
			if isWrite(e.tool) {
				e.args = tc.Function.Arguments
			}
			v.calls[tc.ID] = e
			v.pane.add(e)
		}
	case openai.ChatMessageRoleTool:
		if e, ok := v.calls[msg.ToolCallID]; ok {
			e.done, e.isErr, e.text = true, tools.IsErrorText(msg.Content), msg.Content
			if v.diffOf != nil && e.args != "" && !e.isErr {
				if d, ok := v.diffOf(e.args); ok {
					e.kind, e.write = entryWrite, d
				}
			}
			e.invalidate()
		}
	}
}

// withDiff shows a write read before its diff was known as the write it is.
func (v *mateView) withDiff(args string, d shownDiff) {
	for _, e := range v.pane.entries {
		if e.kind == entryTool && e.done && !e.isErr && e.args == args {
			e.kind, e.write = entryWrite, d
			e.invalidate()
		}
	}
}

// historyMsg is the lead's conversation restored from its session file.
type historyMsg struct {
	msgs []openai.ChatCompletionMessage
}

// restore puts the lead's earlier conversation above what is on screen.
func (p *convPane) restore(msgs []openai.ChatCompletionMessage) {
	if len(msgs) == 0 {
		return
	}
	v := &mateView{name: inbox.LeadName, pane: newConvPane(), calls: map[string]*entry{}} // this process saw none of its writes
	for _, msg := range msgs {
		v.add(msg)
	}
	v.pane.add(&entry{kind: entryNote, text: "(the conversation above is restored from .agentteam/sessions/lead.jsonl)"})
	if !p.follow {
		p.top += len(v.pane.entries) // keep what the person is reading in place
	}
	p.entries = append(v.pane.entries, p.entries...)
}
