package demo

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// The phrases the demo lead understands, one command each.
var (
	spawnRe    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)^spawn\s+(\S+)\s+as\s+(.+?)(?:\s+to\s+(.+))?$`) })
	withPlanRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)\s+with\s+a\s+plan$`) })
	shutdownRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^shut\s*down\s+(\S+)$`) })
	tellRe     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?is)^tell\s+(\S+)\s+to\s+message\s+([^\s:]+)\s*:\s*(.*)$`)
	})
	sendRe      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)^send\s+([^\s:]+)\s*:\s*(.*)$`) })
	broadcastRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)^broadcast\s*:\s*(.*)$`) })
	listRe      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^list\s+team$`) })
	readRe      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^read\s+inbox$`) })
)

const defaultSpawnPrompt = "Say hello to the lead and report what you can do."

// shutdownReason is what a teammate the demo lead shuts down reads.
const shutdownReason = "the person asked for it"

const help = "I am the offline demo model. I understand: " +
	"`spawn NAME as ROLE` (optionally `with a plan`, then `to TASK`; a TASK `write FILE: TEXT` or `run: COMMAND` is done), " +
	"`tell NAME to message OTHER: TEXT`, " +
	"`send NAME: TEXT`, `broadcast: TEXT`, `list team`, `read inbox`, `shutdown NAME`. " +
	"Separate commands with `;` or new lines. I approve every plan a teammate sends me."

// command is one understood phrase, as the tool call that carries it out.
type command struct {
	tool string
	args map[string]any
	what string // "spawn alice as coder": for the summary
	show bool   // the summary quotes the tool's output
	// after names a teammate spawned earlier in the same prompt: a shutdown
	// waits until it has reported its work, a result that says doneWord
	// ("" is any result; a plan-mode teammate first reports its plan).
	after    string
	doneWord string
}

// parseCommands splits a person's prompt into commands; unknown holds the
// parts it did not understand.
func parseCommands(prompt string) (cmds []command, unknown []string) {
	for _, part := range strings.FieldsFunc(prompt, func(r rune) bool { return r == ';' || r == '\n' }) {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if c, ok := parseCommand(part); ok {
			cmds = append(cmds, c)
		} else {
			unknown = append(unknown, part)
		}
	}
	waitForSpawned(cmds)
	return cmds, unknown
}

// waitForSpawned makes "spawn alice …; shutdown alice" mean: shut alice
// down once she has done her work, not before she started it.
func waitForSpawned(cmds []command) {
	for i := range cmds {
		if cmds[i].tool != "shutdown_teammate" {
			continue
		}
		name := cmds[i].args["name"]
		for _, c := range cmds[:i] {
			if c.tool == "spawn_teammate" && c.args["name"] == name {
				cmds[i].after, cmds[i].doneWord = name.(string), ""
				if c.args["plan_mode"] == true {
					cmds[i].doneWord = planApprovedAck
				}
			}
		}
	}
}

func parseCommand(s string) (command, bool) {
	if m := spawnRe().FindStringSubmatch(s); m != nil {
		prompt := strings.TrimSpace(m[3])
		if prompt == "" {
			prompt = defaultSpawnPrompt
		}
		role := strings.TrimSpace(m[2])
		args := map[string]any{"name": m[1], "role": role, "prompt": prompt}
		what := fmt.Sprintf("spawn %s as %s", m[1], role)
		if loc := withPlanRe().FindStringIndex(role); loc != nil {
			role = role[:loc[0]]
			args["role"], args["plan_mode"] = role, true
			what = fmt.Sprintf("spawn %s as %s with a plan", m[1], role)
		}
		return command{tool: "spawn_teammate", args: args, what: what}, true
	}
	if m := shutdownRe().FindStringSubmatch(s); m != nil {
		return command{tool: "shutdown_teammate", args: map[string]any{"name": m[1], "reason": shutdownReason},
			what: "shut down " + m[1]}, true
	}
	if m := tellRe().FindStringSubmatch(s); m != nil {
		return command{tool: "send_message", args: map[string]any{"to": m[1], "content": fmt.Sprintf("message %s: %s", m[2], m[3])},
			what: fmt.Sprintf("ask %s to message %s", m[1], m[2])}, true
	}
	if m := sendRe().FindStringSubmatch(s); m != nil {
		return command{tool: "send_message", args: map[string]any{"to": m[1], "content": m[2]},
			what: "send " + m[1] + " a message"}, true
	}
	if m := broadcastRe().FindStringSubmatch(s); m != nil {
		return command{tool: "broadcast", args: map[string]any{"content": m[1]}, what: "broadcast to the team"}, true
	}
	if listRe().MatchString(s) {
		return command{tool: "list_teammates", args: map[string]any{}, what: "list the team", show: true}, true
	}
	if readRe().MatchString(s) {
		return command{tool: "read_inbox", args: map[string]any{}, what: "read my inbox", show: true}, true
	}
	return command{}, false
}

// latestPrompt finds the person's latest prompt: a plain user message, or
// an inbox block from "user". It returns -1 when there is none.
func latestPrompt(msgs []openai.ChatCompletionMessage) (int, string) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != openai.ChatMessageRoleUser {
			continue
		}
		s := text(msgs[i])
		bs := blocks(s)
		if bs == nil {
			return i, s
		}
		for j := len(bs) - 1; j >= 0; j-- {
			if bs[j].From == "user" {
				return i, bs[j].Content
			}
		}
	}
	return -1, ""
}

// leadTurn decides the lead's next model turn: review any plan waiting,
// then carry out the person's commands one call per turn, then summarise.
func leadTurn(req openai.ChatCompletionRequest) answer {
	msgs := req.Messages
	if a, ok := reviewPending(req); ok {
		return a
	}
	p, prompt := latestPrompt(msgs)
	done := lastAnswer(msgs)
	cmds, unknown := parseCommands(prompt)
	if p < 0 || (len(cmds) == 0 && p < done) {
		return reportsOrIdle(msgs, done)
	}
	if len(cmds) == 0 {
		if len(unknown) == 0 {
			return answer{content: help}
		}
		return answer{content: fmt.Sprintf("I did not understand %q. %s", clip(strings.Join(unknown, "; "), 120), help)}
	}
	calls, results, _ := commandCalls(msgs, p)
	// Once the prompt is answered, only a command that waited for a teammate goes on.
	if len(calls) < len(cmds) && (done < p || cmds[len(calls)].after != "") {
		c := cmds[len(calls)]
		if c.after != "" && !reported(msgs, p, c.after, c.doneWord) {
			return waiting(msgs, p, done, cmds[:len(calls)], calls, results, c)
		}
		if !hasTool(req, c.tool) {
			return answer{content: fmt.Sprintf("I cannot %s: the tool %s is not available to me.", c.what, c.tool)}
		}
		return answer{calls: []openai.ToolCall{toolCall(msgs, c.tool, c.args)}}
	}
	if done > p {
		return progress(msgs, done, cmds[:len(calls)])
	}
	// The first answer to the prompt is the whole picture: what was done and
	// what the team said so far. Later answers say only what is new.
	var sb strings.Builder
	sb.WriteString("Here is what I did:")
	summarise(&sb, cmds, calls, results)
	if len(unknown) > 0 {
		fmt.Fprintf(&sb, "\n\nI did not understand %q.", clip(strings.Join(unknown, "; "), 120))
	}
	if r := teamSoFar(msgs, p); len(r) > 0 {
		sb.WriteString("\n\n" + teamSaid + "\n" + bullets(r))
	}
	return answer{content: sb.String()}
}

// progress answers a wake after the prompt was answered: only what is new
// since the last answer (index done), a short line per teammate's report,
// then the commands a report let go on; never the whole picture again, so
// that each report does not repeat every earlier one. cmds are the
// commands carried out since the prompt, in order.
func progress(msgs []openai.ChatCompletionMessage, done int, cmds []command) answer {
	lines := teamSoFar(msgs, done)
	newCalls, results, _ := commandCalls(msgs, done)
	var sb strings.Builder
	summarise(&sb, cmds[len(cmds)-len(newCalls):], newCalls, results)
	if len(lines) == 0 && sb.Len() == 0 {
		return answer{content: nothingNew}
	}
	out := strings.TrimPrefix(sb.String(), "\n")
	if len(lines) > 0 {
		out = strings.TrimSuffix(bullets(lines)+"\n"+out, "\n")
	}
	return answer{content: out}
}

// eachSaid walks what happened after index from, in order: each plan the
// lead reviewed (as a line) and each teammate's inbox block.
func eachSaid(msgs []openai.ChatCompletionMessage, from int, review func(line string), report func(b block)) {
	results := map[string]string{}
	for _, m := range msgs[from+1:] {
		if m.Role == openai.ChatMessageRoleTool {
			results[m.ToolCallID] = text(m)
		}
	}
	for _, m := range msgs[from+1:] {
		if m.Role == openai.ChatMessageRoleAssistant {
			for _, tc := range m.ToolCalls {
				if tc.Function.Name == "review_plan" {
					review(reviewLine(tc, results[tc.ID]))
				}
			}
			continue
		}
		if m.Role != openai.ChatMessageRoleUser {
			continue
		}
		for _, b := range blocks(text(m)) {
			if b.From != "user" {
				report(b)
			}
		}
	}
}

// teamSoFar is what the team said after index from, in an order that does
// not depend on timing: by sender, each sender's words in the order it sent
// them, one line per part of a combined report; then the plans reviewed.
func teamSoFar(msgs []openai.ChatCompletionMessage, from int) []string {
	said := map[string][]string{}
	var reviews []string
	eachSaid(msgs, from, func(line string) { reviews = append(reviews, line) },
		func(b block) { said[b.From] = append(said[b.From], reportParts(b)...) })
	names := make([]string, 0, len(said))
	for n := range said {
		names = append(names, n)
	}
	sort.Strings(names)
	sort.Strings(reviews)
	var lines []string
	for _, n := range names {
		lines = append(lines, settleOrder(said[n])...)
	}
	return append(lines, reviews...)
}

// teamSaid heads the list of what the team said, after what the lead did.
const teamSaid = "The team said:"

// bullets is lines as a Markdown list, one item each, so that the TUI
// shows each on its own (lines alone would run into one paragraph).
func bullets(lines []string) string {
	return "- " + strings.Join(lines, "\n- ")
}

// settleOrder orders one sender's lines: its start and its plan's steps as
// they came (their order is the sender's own), then the rest, whose order
// depends on when other agents' messages reached it, sorted.
func settleOrder(lines []string) []string {
	rank := func(l string) int {
		_, part, _ := strings.Cut(l, ": "+doneWord)
		switch {
		case strings.HasPrefix(part, "ready — "):
			return 0
		case strings.HasPrefix(part, "plan "):
			return 1
		}
		return 2
	}
	sort.SliceStable(lines, func(i, j int) bool {
		ri, rj := rank(lines[i]), rank(lines[j])
		if ri != rj || ri < 2 {
			return ri < rj
		}
		return lines[i] < lines[j]
	})
	return lines
}

// reportParts is a teammate's message as short progress lines: one per
// part of a combined report ("alice (coder): ready — x; received from
// lead: hi"), so two reports read the same as one report of both; each
// part as its first line, clipped.
func reportParts(b block) []string {
	if b.Type != "result" {
		return []string{reportLine(b)}
	}
	parts := []string{b.Content}
	if rest, ok := strings.CutPrefix(b.Content, b.From+" ("); ok {
		if _, rest, ok = strings.Cut(rest, "): "); ok {
			parts = strings.Split(rest, "; ")
		}
	}
	var out []string
	for _, part := range parts {
		out = append(out, b.From+": "+doneWord+firstLine(part))
	}
	return out
}

// nothingNew answers a wake that brought nothing to tell.
const nothingNew = "Nothing new from the team."

// doneWord starts the progress line of a teammate's result.
const doneWord = "done — "

// progressClip is how long a progress line's quote of a message may be.
const progressClip = 100

// firstLine is the first non-empty line of s, clipped for a progress line.
func firstLine(s string) string {
	s = strings.TrimSpace(s)
	line, _, _ := strings.Cut(s, "\n")
	return clip(line, progressClip)
}

// reportsOrIdle answers a wake that brought no command: what the team said.
func reportsOrIdle(msgs []openai.ChatCompletionMessage, done int) answer {
	if r := teamSoFar(msgs, done); len(r) > 0 {
		return answer{content: bullets(r)}
	}
	return answer{content: nothingNew + " " + help}
}

// summarise writes one list item per command carried out, then what the
// commands that show something showed, each as a block of its own.
func summarise(sb *strings.Builder, cmds []command, calls []openai.ToolCall, results map[string]string) {
	var shown []string
	for i, c := range cmds {
		res := ""
		if i < len(calls) {
			res = results[calls[i].ID]
		}
		switch {
		case failed(res):
			fmt.Fprintf(sb, "\n- could not %s: %s", c.what, clip(res, 200))
		case c.show && c.tool == "list_teammates":
			fmt.Fprintf(sb, "\n- %s: below", c.what)
			shown = append(shown, clip(namesAndRoles(res), 1200))
		case c.show:
			fmt.Fprintf(sb, "\n- %s: below", c.what)
			shown = append(shown, clip(res, 1200))
		default:
			fmt.Fprintf(sb, "\n- %s: done", c.what)
		}
	}
	for _, out := range shown {
		sb.WriteString("\n\n```\n" + strings.TrimRight(out, "\n") + "\n```")
	}
}

// namesAndRoles keeps the NAME and ROLE columns of list_teammates' table:
// status, turns and times depend on when the list was asked for, and the
// demo's answer must not.
func namesAndRoles(table string) string {
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	if len(lines) == 0 {
		return table
	}
	at := strings.Index(lines[0], "STATUS")
	if !strings.HasPrefix(lines[0], "NAME") || at < 0 {
		return table
	}
	cut := utf8.RuneCountInString(lines[0][:at]) // tabwriter aligns by characters
	for i, l := range lines {
		if r := []rune(l); len(r) > cut {
			lines[i] = strings.TrimRight(string(r[:cut]), " ")
		}
	}
	return strings.Join(lines, "\n")
}

// reportLine says a teammate's message other than a result in a line.
func reportLine(b block) string {
	switch b.Type {
	case "error":
		return fmt.Sprintf("%s: failed — %s", b.From, firstLine(b.Content))
	case "plan_approval_request":
		return fmt.Sprintf("%s asks to approve a plan (%s)", b.From, b.CorrelationID)
	case "shutdown_response":
		return fmt.Sprintf("%s answers the shutdown request: %s", b.From, firstLine(b.Content))
	case "broadcast":
		return fmt.Sprintf("%s broadcasts: %s", b.From, firstLine(b.Content))
	}
	return fmt.Sprintf("%s says: %s", b.From, firstLine(b.Content))
}
