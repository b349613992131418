package loop

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/inbox"
)

// Inbox is what the loop needs from the inbox store.
type Inbox interface {
	ReadUnread(ctx context.Context, name string) (inbox.Batch, error)
	Commit(ctx context.Context, name string, b inbox.Batch) error
}

// formatMessage is how an inbox message appears in a conversation. The id
// attribute is also how a restored agent knows what it has already seen.
func formatMessage(m inbox.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<message from="%s" type="%s" id="%s"`, attr(m.From), attr(string(m.Type)), attr(m.ID))
	if m.CorrelationID != "" {
		fmt.Fprintf(&b, ` correlation_id="%s"`, attr(m.CorrelationID))
	}
	if m.TaskID != "" {
		fmt.Fprintf(&b, ` task_id="%s"`, attr(m.TaskID))
	}
	b.WriteString(">\n")
	b.WriteString(defuseTags(m.Content))
	b.WriteString("\n</message>")
	return b.String()
}

// frameTag finds anything in content that could read as the start of a
// message frame's tag, in any case and with space after the '<'.
var frameTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)<(\s*/?\s*message\b)`) })

// defuseTags escapes the '<' of every frame-like tag in content, so that no
// sender can end its own frame and open one that seems to come from someone
// else; all other text, code with '<' included, stays as written.
func defuseTags(content string) string {
	if !strings.Contains(content, "<") {
		return content
	}
	return frameTag().ReplaceAllString(content, "&lt;$1")
}

var (
	attrEscaper   = strings.NewReplacer(`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;")
	attrUnescaper = strings.NewReplacer("&amp;", `&`, "&quot;", `"`, "&lt;", `<`, "&gt;", `>`)
)

func attr(s string) string { return attrEscaper.Replace(s) }

// frameHead is the opening tag formatMessage writes, up to the content;
// frameAttr is one of its attributes.
var (
	frameHead = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^<message((?: [a-z_]+="[^"]*")*)>\n`) })
	frameAttr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(` ([a-z_]+)="([^"]*)"`) })
)

const frameEnd = "\n</message>"

// ParseMessageFrame reads back a conversation message that formatMessage
// wrote: the inbox message's sender, type, id, correlation and task ids,
// and its content as framed (frame-like tags in it stay defused, so what
// comes back can never pass for another frame); the recipient is the
// conversation's owner and not in the frame. It reports false for any other
// text, such as what a person said.
func ParseMessageFrame(content string) (inbox.Message, bool) {
	var m inbox.Message
	head := frameHead().FindStringSubmatch(content)
	if head == nil || !strings.HasSuffix(content, frameEnd) || len(head[0]) > len(content)-len(frameEnd) {
		return inbox.Message{}, false
	}
	seen := map[string]bool{}
	for _, a := range frameAttr().FindAllStringSubmatch(head[1], -1) {
		v := attrUnescaper.Replace(a[2])
		switch a[1] {
		case "from":
			m.From = v
		case "type":
			m.Type = inbox.MessageType(v)
		case "id":
			m.ID = v
		case "correlation_id":
			m.CorrelationID = v
		case "task_id":
			m.TaskID = v
		}
		seen[a[1]] = true
	}
	if !seen["from"] || !seen["type"] {
		return inbox.Message{}, false
	}
	m.Content = content[len(head[0]) : len(content)-len(frameEnd)]
	return m, true
}

var messageTag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<message from="[^"]*" type="[^"]*" id="([^"]+)"`) })

// markSeen adds the inbox ids quoted in m (user messages and read_inbox results).
func markSeen(seen map[string]bool, m openai.ChatCompletionMessage) {
	if m.Role != openai.ChatMessageRoleUser && m.Role != openai.ChatMessageRoleTool ||
		!strings.Contains(m.Content, "<message from=") { // the regexp is slow on long results
		return
	}
	for _, sub := range messageTag().FindAllStringSubmatch(m.Content, -1) {
		seen[sub[1]] = true
	}
}

// seenIDs are the inbox message ids already in the conversation, so that
// a message delivered again is taken in once.
type seenIDs struct {
	mu  sync.Mutex
	ids map[string]bool
}

func (s *seenIDs) reset(ids map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids = ids
}

// unseen returns the batch's messages not already in the conversation (nor twice in the batch).
func (s *seenIDs) unseen(b inbox.Batch) []inbox.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []inbox.Message
	inBatch := map[string]bool{}
	for _, m := range b.Messages {
		if m.ID != "" && (s.ids[m.ID] || inBatch[m.ID]) {
			continue
		}
		inBatch[m.ID] = true
		out = append(out, m)
	}
	return out
}

func (s *seenIDs) mark(ids []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if id != "" {
			s.ids[id] = true
		}
	}
}

// intake takes an agent's inbox into its conversation: the session line
// is written first, then the batch is committed, so a crash re-delivers
// rather than loses, and the ids already seen keep the conversation exact.
type intake struct {
	name   string
	inbox  Inbox // nil: no inbox
	seen   *seenIDs
	emit   func(Event)
	record func(context.Context, ...openai.ChatCompletionMessage) error
}

func (in *intake) reportBad(b inbox.Batch) {
	for _, bad := range b.Bad {
		in.emit(Event{Kind: EventBadLine, Result: bad.Line, Err: fmt.Sprintf("offset %d: %s", bad.Offset, bad.Reason)})
	}
}

// Absorb takes the unread inbox messages into the conversation without
// calling the model, for a runtime that answers for an idle agent (a
// shutdown): nothing is lost, and a resumed agent answers them later. It
// returns the messages taken and refuses while a cycle runs.
func (a *Agent) Absorb() ([]inbox.Message, error) {
	if !a.conv.start() {
		return nil, ErrCycleRunning
	}
	ctx := context.Background() // Absorb is given no context: a shutdown takes all in
	msgs, err := a.in.takeMessages(ctx)
	if endErr := a.conv.end(ctx); endErr != nil && err == nil {
		err = endErr
	}
	return msgs, err
}

// take moves unread messages into the conversation between turns.
func (in *intake) take(ctx context.Context) error {
	_, err := in.takeMessages(ctx)
	return err
}

func (in *intake) takeMessages(ctx context.Context) ([]inbox.Message, error) {
	if in.inbox == nil {
		return nil, nil
	}
	b, err := in.inbox.ReadUnread(ctx, in.name)
	if err != nil {
		return nil, fmt.Errorf("read the inbox of %s: %w", in.name, err)
	}
	if b.Empty() {
		return nil, nil
	}
	in.reportBad(b)
	fresh := in.seen.unseen(b)
	msgs := make([]openai.ChatCompletionMessage, 0, len(fresh))
	ids := make([]string, 0, len(fresh))
	for _, m := range fresh {
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: formatMessage(m)})
		ids = append(ids, m.ID)
	}
	in.seen.mark(ids)
	if err := in.record(ctx, msgs...); err != nil {
		return nil, err
	}
	// Recorded: the commit is not given up with ctx (the store still bounds it).
	if err := in.inbox.Commit(context.WithoutCancel(ctx), in.name, b); err != nil && !errors.Is(err, inbox.ErrHeld) {
		// Held: the messages are in the conversation; they come again
		// once the other commit times out, are dropped by id, and that
		// read's commit moves the position.
		return nil, fmt.Errorf("mark the inbox of %s read: %w", in.name, err)
	}
	if len(ids) > 0 {
		in.emit(Event{Kind: EventInbox, MessageIDs: ids, Messages: fresh})
	}
	return fresh, nil
}

// ReadInbox implements tools.InboxReader for read_inbox: the unread messages
// as text; commit marks them read once the text is recorded.
func (a *Agent) ReadInbox(ctx context.Context) (string, func() error, error) { return a.in.read(ctx) }

func (in *intake) read(ctx context.Context) (string, func() error, error) {
	noop := func() error { return nil }
	if in.inbox == nil {
		return "", noop, nil
	}
	if err := ctx.Err(); err != nil {
		return "", noop, err
	}
	b, err := in.inbox.ReadUnread(ctx, in.name)
	if err != nil {
		return "", noop, fmt.Errorf("read the inbox of %s: %w", in.name, err)
	}
	if b.Empty() {
		return "", noop, nil
	}
	in.reportBad(b)
	fresh := in.seen.unseen(b)
	parts := make([]string, 0, len(fresh))
	ids := make([]string, 0, len(fresh))
	for _, m := range fresh {
		parts = append(parts, formatMessage(m))
		ids = append(ids, m.ID)
	}
	commit := func() error {
		in.seen.mark(ids)
		// Recorded: the commit is not given up with the call's ctx.
		if err := in.inbox.Commit(context.WithoutCancel(ctx), in.name, b); err != nil && !errors.Is(err, inbox.ErrHeld) {
			return fmt.Errorf("mark the inbox of %s read: %w", in.name, err)
		}
		if len(ids) > 0 {
			in.emit(Event{Kind: EventInbox, MessageIDs: ids, Messages: fresh})
		}
		return nil
	}
	return strings.Join(parts, "\n\n"), commit, nil
}
