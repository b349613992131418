package event

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/loop/llm"
)

// Every sentence a person reads about an event is written here, from the
// event's fields: `agentteam run` prints them as progress lines, the TUI
// shows them. What the model reads is in team/prompts.go and the protocols' texts.

// Sentence is the one human line for an event, as `agentteam run` prints it.
func (e Event) Sentence() string {
	switch p := e.Payload.(type) {
	case Spawn:
		if p.Model != "" {
			return fmt.Sprintf("spawn %s (%s) on %s", e.Agent, p.Role, p.Model)
		}
		return fmt.Sprintf("spawn %s (%s)", e.Agent, p.Role)
	case StatusChanged:
		s := fmt.Sprintf("%s is %s", e.Agent, p.Status)
		if p.Reason != "" {
			s += ": " + p.Reason
		}
		return s
	case MessageDelivered:
		return fmt.Sprintf("%s → %s (%s): %s", p.From, p.To, p.Type, FirstLine(p.Content, 100))
	case ToolCall:
		if p.IsError {
			return fmt.Sprintf("%s: %s refused: %s", e.Agent, p.Tool, FirstLine(p.Result, 120))
		}
		return fmt.Sprintf("%s: %s done", e.Agent, p.Tool)
	case Reply:
		if p.Text == "" {
			return fmt.Sprintf("%s called its tools (turn %d)", e.Agent, p.Turn)
		}
		return fmt.Sprintf("%s: %s", e.Agent, FirstLine(p.Text, 160))
	case Answer:
		if p.Interrupted {
			return fmt.Sprintf("%s's turn was interrupted", theAgent(e.Agent))
		}
		return fmt.Sprintf("%s answered: %s", theAgent(e.Agent), FirstLine(p.Text, 160))
	case Retry:
		return fmt.Sprintf("%s: retrying in %s: %s", e.Agent, p.Delay.Round(100*time.Millisecond), p.Err)
	case Failure:
		return kindLine(e, FirstLine(p.Text, 200))
	case BadLine:
		return kindLine(e, FirstLine(p.Reason, 200))
	case Repair:
		return kindLine(e, FirstLine(p.Reason, 200))
	case Settled:
		return "the team settled"
	case TaskChanged:
		return FirstLine(p.Text(e.Agent), 160)
	case Compacted:
		return fmt.Sprintf("%s: %s", e.Agent, p.text())
	case Instructions:
		return fmt.Sprintf("%s %s", e.Agent, FirstLine(p.text(), 300))
	case HandoffChanged:
		return fmt.Sprintf("%s: %s", e.Agent, FirstLine(p.text(), 200))
	case Activity:
		return fmt.Sprintf("%s: %s", e.Agent, p.Words())
	case Intake:
		return fmt.Sprintf("%s read %d inbox messages", e.Agent, len(p.Messages))
	case RequestOpened:
		return fmt.Sprintf("%s asks %s %s (request %s)", p.From, p.To, asked[p.RequestKind], p.ID)
	case RequestAnswered:
		s := fmt.Sprintf("%s request %s: %s by %s", kindWords(p.RequestKind), p.ID, p.Outcome, p.By)
		if p.Reason != "" {
			s += ": " + FirstLine(p.Reason, 160)
		}
		return s
	case RequestExpired:
		s := fmt.Sprintf("%s request %s: %s, no answer in time", kindWords(p.RequestKind), p.ID, p.Outcome)
		if p.Reason != "" {
			s += ": " + FirstLine(p.Reason, 160)
		}
		return s
	case WorktreeChanged:
		return p.sentence(e.Agent)
	case Permission:
		if p.Decision == "asked" {
			return fmt.Sprintf("%s asks %s for permission: %s %s (request %s)", e.Agent, p.By, p.Tool, FirstLine(p.Subject, 100), p.RequestID)
		}
		s := fmt.Sprintf("%s: %s %s %s by %s", e.Agent, p.Tool, FirstLine(p.Subject, 100), p.Decision, p.By)
		if p.Why != "" {
			s += ": " + FirstLine(p.Why, 160)
		}
		return s
	case interface{ sentence(agent string) string }: // HookRun, Prompt
		return p.sentence(e.Agent)
	case Unknown:
		return fmt.Sprintf("%s: %s", e.Agent, p.Name)
	}
	return fmt.Sprintf("%s: %s", e.Agent, e.Kind())
}

// Brief is the event in a status line's few words: what Sentence says,
// but a retry in a person's words instead of the client's error.
func (e Event) Brief() string {
	if r, ok := e.Payload.(Retry); ok {
		return fmt.Sprintf("%s: %s", e.Agent, r.Words())
	}
	return e.Sentence()
}

// kindLine is "agent: kind: text", for the events a person must notice.
func kindLine(e Event, text string) string {
	if e.Agent == "" {
		return fmt.Sprintf("%s: %s", e.Kind(), text)
	}
	return fmt.Sprintf("%s: %s: %s", e.Agent, e.Kind(), text)
}

// theAgent names an agent in a sentence: "the lead", or a teammate's name.
func theAgent(name string) string {
	if name == inbox.LeadName {
		return "the lead"
	}
	return name
}

// Words say what an agent does: "thinking", "running bash".
func (a Activity) Words() string {
	if a.Tool == "" {
		return "thinking"
	}
	return "running " + a.Tool
}

// interruptedText stands for an interrupted answer's text in events.jsonl.
const interruptedText = "(interrupted)"

// Words says a retry in a person's words: "rate limited, retrying in 4 s".
func (r Retry) Words() string {
	why := "the model call failed"
	switch r.Cause {
	case llm.RetryRateLimit:
		why = "rate limited"
	case llm.RetryServerError:
		why = "the model server had an error"
		if r.HTTPStatus != 0 {
			why += fmt.Sprintf(" (%d %s)", r.HTTPStatus, http.StatusText(r.HTTPStatus))
		}
	case llm.RetryTimeout:
		why = "the model server timed out"
	case llm.RetryConnection:
		why = "the connection dropped"
	}
	return why + ", retrying in " + shortDuration(r.Delay)
}

// shortDuration is a wait in words: "300 ms", "4 s", "1.5 s".
func shortDuration(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	secs := float64(d.Round(100*time.Millisecond)) / float64(time.Second)
	return strconv.FormatFloat(secs, 'f', -1, 64) + " s"
}

// taskVerbs are the words of each task change: "alice claimed t3".
var taskVerbs = map[TaskChange]string{
	TaskChangeCreated:     "created",
	TaskChangeClaimed:     "claimed",
	TaskChangeAutoClaimed: "auto-claimed",
	TaskChangeBlockers:    "set what waits for",
	TaskChangeCompleted:   "completed",
	TaskChangeReleased:    "released",
	TaskChangeHandedOver:  "handed over",
}

// Text is a task change in a line: "alice completed t1: build (unblocks t2)".
func (p TaskChanged) Text(agent string) string {
	verb, ok := taskVerbs[p.Change]
	if !ok {
		verb = string(p.Change)
	}
	s := fmt.Sprintf("%s %s %s: %s", agent, verb, p.TaskID, p.Subject)
	extra := ""
	switch p.Change {
	case TaskChangeBlockers:
		extra = "blocked by " + orNone(p.BlockedBy)
	case TaskChangeCompleted:
		if len(p.Unblocks) > 0 {
			extra = "unblocks " + strings.Join(p.Unblocks, ", ")
		}
	case TaskChangeReleased:
		extra = "was " + p.WasOwner + "'s"
	case TaskChangeHandedOver:
		extra = "to " + p.To
	}
	if extra != "" {
		s += " (" + extra + ")"
	}
	return s
}

// text is one side's handoff state in a line:
// "handoff handoff-1a2b3c4d (sender of t1, with bob): awaiting accept".
func (p HandoffChanged) text() string {
	s := fmt.Sprintf("handoff %s (%s of %s, with %s): %s", p.RequestID, p.Side, p.Task, p.Peer, strings.ReplaceAll(string(p.State), "_", " "))
	if p.Reason != "" {
		s += ": " + p.Reason
	}
	return s
}

func (p Compacted) text() string {
	return fmt.Sprintf("dropped %d earlier messages", p.Dropped)
}

// asked says what a request asks of the one it is sent to.
var asked = map[RequestKind]string{
	RequestShutdown:     "to shut down",
	RequestPlanApproval: "to approve a plan",
	RequestHandoff:      "to take over a task",
	RequestPermission:   "for permission",
}

// kindWords is a request kind in a sentence: "plan approval".
func kindWords(k RequestKind) string { return strings.ReplaceAll(string(k), "_", " ") }

// FirstLine is s up to its first line break (marked " …"), at most n runes:
// how a sentence quotes a text, in progress lines and tables alike.
func FirstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n]) + "…"
	}
	return s
}

// sentence says what happened to name's worktree.
func (p WorktreeChanged) sentence(name string) string {
	stat := ""
	if p.Stat != "" {
		stat = ": " + p.Stat
	}
	switch p.Action {
	case WorktreeCreated:
		return fmt.Sprintf("%s works in the worktree %s on branch %s", name, p.Path, p.Branch)
	case WorktreeCommitted:
		return fmt.Sprintf("%s's work was committed on %s%s", name, p.Branch, stat)
	case WorktreeMerged:
		return fmt.Sprintf("merged %s into %s%s", p.Branch, p.Into, stat)
	case WorktreeConflicted:
		return fmt.Sprintf("merging %s into %s conflicts in %s: the merge was aborted and %s was asked to resolve it on its branch",
			p.Branch, p.Into, strings.Join(p.Conflicts, ", "), name)
	case WorktreeRemoved:
		return fmt.Sprintf("removed %s's worktree and its merged branch %s", name, p.Branch)
	case WorktreeKept:
		where := ""
		if p.Path != "" {
			where = " (worktree " + p.Path + ")"
		}
		s := fmt.Sprintf("kept %s's unmerged branch %s%s", name, p.Branch, where)
		if p.Reason != "" {
			s += ": " + p.Reason
		}
		return s
	}
	return fmt.Sprintf("%s: worktree %s", name, p.Action)
}

func (p Prompt) sentence(string) string {
	return "the person asks the lead: " + FirstLine(p.Text, 160)
}

// orNone is ids joined by commas, "-" for none.
func orNone(ids []string) string {
	if len(ids) == 0 {
		return "-"
	}
	return strings.Join(ids, ",")
}

// sentence is the run in one line: "alice: PreToolUse hook ./check.sh
// blocked bash: no rm here".
func (p HookRun) sentence(agent string) string {
	s := fmt.Sprintf("%s: %s hook %s", agent, p.Event, FirstLine(p.Command, 80))
	switch p.Decision {
	case "blocked":
		s += " blocked"
		if p.Tool != "" {
			s += " " + p.Tool
		}
	case "failed":
		s += " " + FirstLine(p.Text, 200)
		return s
	default:
		s += " ran"
		if p.Tool != "" {
			s += " for " + p.Tool
		}
		return s
	}
	if p.Text != "" {
		s += ": " + FirstLine(p.Text, 160)
	}
	return s
}
