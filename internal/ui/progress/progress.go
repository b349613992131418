// Package progress is a team's events as agentteam run prints them:
//   - Line is an event's one line, or "" for those too chatty to print;
//   - a Printer prints each event as its line with the time on stderr,
//     or as JSONL on stdout (--json), safe for many agents' goroutines.
package progress

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/ui/engine"
	"github.com/agentteam/agentteam/team/event"
	"github.com/agentteam/agentteam/tools"
)

// Printer prints team events: lines on errOut, or JSONL on out with --json.
type Printer struct {
	err   io.Writer
	json  bool
	quiet bool
	enc   *json.Encoder
	mu    sync.Mutex // events come from many agent goroutines
}

// New is a Printer of JSONL on out (asJSON), or of lines on errOut unless quiet.
func New(out, errOut io.Writer, asJSON, quiet bool) *Printer {
	return &Printer{err: errOut, json: asJSON, quiet: quiet, enc: json.NewEncoder(out)}
}

// Write writes v as one line of JSON on out.
func (p *Printer) Write(v any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.enc.Encode(v)
}

// Event prints e: its JSON, or its line with the time.
func (p *Printer) Event(e event.Event) {
	if p.json {
		_ = p.Write(e)
		return
	}
	if p.quiet {
		return
	}
	line := Line(e)
	if line == "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.err, "%s %s\n", e.Time.Local().Format("15:04:05"), line)
}

// Line is the event's sentence, or "" for events too chatty to
// print (replies, activity: they are in events.jsonl). Every tool call gets
// a line, as in the TUI: a bash that deleted a file must leave a trace.
func Line(e event.Event) string {
	switch p := e.Payload.(type) {
	case event.Spawn, event.StatusChanged, event.MessageDelivered, event.Retry, event.TaskChanged,
		event.Failure, event.BadLine, event.Repair, event.WorktreeChanged, event.HookRun:
		return e.Sentence()
	case event.ToolCall:
		line := e.Agent + ": " + engine.CallSummary(p.Tool, p.Args)
		if p.IsError {
			return line + "  ✗ " + event.FirstLine(tools.ErrorText(p.Result), 120)
		}
		return line + "  ✓"
	case event.Instructions:
		// The lead's files once at the start and on a change; a teammate's
		// only when one was skipped or cut.
		if e.Agent == inbox.LeadName || len(p.Notes) > 0 {
			return e.Sentence()
		}
	case event.Permission:
		if p.Decision == "asked" && p.By == inbox.UserName {
			return e.Sentence() + ": answer with agentteam approve " + p.RequestID + " or agentteam deny " + p.RequestID + " REASON"
		}
		if p.By != "mode" && p.By != "rule" || p.Decision != "allowed" {
			return e.Sentence()
		}
	}
	return ""
}
