// Package hooks runs the person's hook commands for an event of an agent's
// life and reads their answer, in the shape of Claude Code's hooks so that
// people's scripts carry over: one JSON object on stdin; exit 0 goes on,
// exit 2 blocks the step with stderr as the reason, any other exit is a
// failure that blocks nothing; JSON on stdout may give a decision.
//
//   - A hook runs as the person, not in the sandbox: it is the person's own
//     command. Its environment is agentteam's minus the model key's
//     variables (Runner.Env), its working directory the agent's.
//   - Each run is bounded: a timeout (DefaultTimeout unless the hook says)
//     kills its whole process group, and stdout and stderr are each kept to
//     MaxOutput bytes. A hook that hangs, crashes, is missing or prints
//     nonsense is one sentence in its Report and never blocks the team.
package hooks

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Event names a point of an agent's life a hook runs at.
type Event string

// The events, named as Claude Code names them.
const (
	PreToolUse       Event = "PreToolUse"
	PostToolUse      Event = "PostToolUse"
	UserPromptSubmit Event = "UserPromptSubmit"
	Stop             Event = "Stop"
	TeammateIdle     Event = "TeammateIdle"
	TaskCreated      Event = "TaskCreated"
	TaskCompleted    Event = "TaskCompleted"
	SessionStart     Event = "SessionStart"
)

// Events are every event, in the order of an agent's life.
var Events = []Event{SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, TaskCreated, TaskCompleted, Stop, TeammateIdle}

// Known reports whether name is an event, spelled exactly.
func Known(name string) bool {
	for _, e := range Events {
		if string(e) == name {
			return true
		}
	}
	return false
}

// Matched reports whether the event's matcher means something: the tool's
// name for the tool events, the source ("startup", "resume") for
// SessionStart. Other events run every hook given for them.
func (e Event) Matched() bool { return e == PreToolUse || e == PostToolUse || e == SessionStart }

// DefaultTimeout bounds a hook that names no timeout, as in Claude Code.
const DefaultTimeout = 60 * time.Second

// MaxOutput is how much of a hook's stdout, and of its stderr, is kept.
const MaxOutput = 64 << 10

// maxReason bounds the reason or context a hook gives an agent.
const maxReason = 8 << 10

// Hook is one configured command.
type Hook struct {
	Event Event
	// Matcher is a regular expression the whole name must match ("" or "*":
	// every name). "bash|write_file" is bash or write_file.
	Matcher string
	Command string
	Timeout time.Duration // 0: DefaultTimeout
	// From says where it was configured, for the person.
	From string
}

// CompileMatcher is the matcher as it is applied: anchored at both ends, so
// "bash" is not also mcp__x__bash_helper.
func CompileMatcher(m string) (*regexp.Regexp, error) {
	if m == "" || m == "*" {
		return nil, nil
	}
	if _, err := regexp.Compile(m); err != nil {
		return nil, fmt.Errorf("matcher %q is not a regular expression: %v", m, strings.TrimPrefix(err.Error(), "error parsing regexp: "))
	}
	return regexp.Compile("^(?:" + m + ")$")
}

// ToolResponse is a tool call's result as PostToolUse hooks get it.
type ToolResponse struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error"`
}

// Input is what a hook reads on stdin: Claude Code's fields, then ours.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path,omitempty"`
	Cwd            string `json:"cwd"`
	HookEventName  Event  `json:"hook_event_name"`

	ToolName     string          `json:"tool_name,omitempty"`
	ToolInput    json.RawMessage `json:"tool_input,omitempty"`
	ToolResponse *ToolResponse   `json:"tool_response,omitempty"`
	ToolUseID    string          `json:"tool_use_id,omitempty"`

	Prompt string `json:"prompt,omitempty"` // UserPromptSubmit
	Source string `json:"source,omitempty"` // SessionStart: startup or resume
	// StopHookActive, for Stop, says the agent goes on because a Stop hook
	// said so already.
	StopHookActive       *bool  `json:"stop_hook_active,omitempty"`
	LastAssistantMessage string `json:"last_assistant_message,omitempty"`

	TaskID          string `json:"task_id,omitempty"`
	TaskSubject     string `json:"task_subject,omitempty"`
	TaskDescription string `json:"task_description,omitempty"`
	TeammateName    string `json:"teammate_name,omitempty"`
	TeamName        string `json:"team_name,omitempty"`

	// Agent and Role are the agent the event is about; Workspace is the
	// team's directory (Cwd is the agent's own, its worktree if it has one).
	Agent     string `json:"agent"`
	Role      string `json:"role,omitempty"`
	Workspace string `json:"workspace"`
}

// Outcome is what the hooks of one event said, together.
type Outcome struct {
	// Blocked: a hook exited 2 or decided to block (deny); Reason is why,
	// in the hook's words, for the agent (or the person).
	Blocked bool
	Reason  string
	// Context is text the hooks add for the agent: additionalContext, or
	// the plain stdout of SessionStart and UserPromptSubmit hooks.
	Context string
}

// Report is one hook run, for the team's event log.
type Report struct {
	Event    Event
	Command  string
	Tool     string // the tool, for the tool events
	ExitCode int    // -1 when it did not exit by itself
	Duration time.Duration
	// Decision is "ok", "blocked" or "failed".
	Decision string
	// Text is the reason it blocked, or what went wrong, in one sentence.
	Text string
}

// output is the JSON a hook may print on stdout.
type output struct {
	Continue           *bool  `json:"continue"`
	StopReason         string `json:"stopReason"`
	Decision           string `json:"decision"`
	Reason             string `json:"reason"`
	SystemMessage      string `json:"systemMessage"`
	HookSpecificOutput *struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision"`
		PermissionDecisionReason string `json:"permissionDecisionReason"`
		AdditionalContext        string `json:"additionalContext"`
	} `json:"hookSpecificOutput"`
}

// answer is one run's reading: whether it blocks, why, and what it adds.
type answer struct {
	block   bool
	reason  string
	context string
	problem string // the hook misbehaved; the step goes on
}

// decide reads what a hook that ran to its end said: its exit code, and
// on exit 0 its stdout (plain text is context for SessionStart and
// UserPromptSubmit, as in Claude Code; JSON is a decision).
func decide(ev Event, code int, stdout, stderr string) answer {
	switch code {
	case 0:
	case 2:
		why := strings.TrimSpace(stderr)
		if why == "" {
			why = "a " + string(ev) + " hook refused without saying why (exit 2, nothing on stderr)"
		}
		return answer{block: true, reason: clipText(why, maxReason)}
	default:
		return answer{problem: fmt.Sprintf("exited %d%s; it blocks nothing, so the step went on", code, stderrTail(stderr))}
	}
	text := strings.TrimSpace(stdout)
	if !strings.HasPrefix(text, "{") {
		if text != "" && (ev == SessionStart || ev == UserPromptSubmit) {
			return answer{context: clipText(text, maxReason)}
		}
		return answer{}
	}
	var out output
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return answer{problem: "printed something on stdout that starts like JSON but is not: " + jsonProblem(err) + "; it was ignored"}
	}
	var a answer
	if h := out.HookSpecificOutput; h != nil {
		a.context = h.AdditionalContext
		if ev == PreToolUse && h.PermissionDecision == "deny" {
			a.block, a.reason = true, h.PermissionDecisionReason
		}
	}
	if out.Decision == "block" || out.Decision == "deny" {
		a.block, a.reason = true, firstNonEmpty(a.reason, out.Reason)
	}
	if out.Continue != nil && !*out.Continue {
		a.block, a.reason = true, firstNonEmpty(a.reason, out.StopReason, out.Reason)
	}
	if a.block && strings.TrimSpace(a.reason) == "" {
		a.reason = "a " + string(ev) + " hook refused without saying why"
	}
	a.reason, a.context = clipText(strings.TrimSpace(a.reason), maxReason), clipText(strings.TrimSpace(a.context), maxReason)
	return a
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// jsonProblem is the decoder's complaint without its package prefix.
func jsonProblem(err error) string {
	return strings.TrimPrefix(err.Error(), "json: ")
}

// stderrTail is ": " and the last line of stderr, when it has one.
func stderrTail(stderr string) string {
	s := strings.TrimSpace(stderr)
	if s == "" {
		return ""
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return ": " + clipText(s, 200)
}

// clipText cuts s to at most n bytes on a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "… (cut)"
}
