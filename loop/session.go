package loop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/loop/llm"
)

// session is the append-only record of one agent's conversation: a file
// (path), or another store (log, a SessionLog). One writer per agent, so
// O_APPEND with one write per step needs no file lock. The file stays open
// between writes (opening it was a large part of a turn's cost); Close lets
// it go, and the next write opens it again.
type session struct {
	path string
	log  SessionLog // nil: the file at path
	mu   sync.Mutex
	f    *os.File
}

// append writes msgs as JSON lines in a single write. The conversation
// keeps msgs whether or not they are written, so the write is not given
// up with ctx (a cancelled turn's reply and answers are recorded too);
// the store still bounds it.
func (s *session) append(ctx context.Context, msgs ...openai.ChatCompletionMessage) error {
	if s == nil || len(msgs) == 0 {
		return nil
	}
	lines := make([][]byte, 0, len(msgs))
	for _, m := range msgs {
		b, err := llm.EncodeMessage(m)
		if err != nil {
			return fmt.Errorf("encode session line: %w", err)
		}
		lines = append(lines, b)
	}
	if s.log != nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.log.AppendLines(context.WithoutCancel(ctx), lines)
	}
	return s.appendLines(lines)
}

// appendLines writes lines to the file, each ended by a newline, in a
// single write. A file that does not end in a newline (a write torn by a
// crash) gets one first, so the torn line stays alone and unread and the
// new line whole.
func (s *session) appendLines(lines [][]byte) error {
	var buf bytes.Buffer
	for _, b := range lines {
		buf.Write(b)
		buf.WriteByte('\n')
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		if err := os.MkdirAll(filepath.Dir(s.path), 0o755); err != nil {
			return fmt.Errorf("record session: %w", err)
		}
		// Not through a link: a checked-out .agentteam/ could point it anywhere.
		f, err := statefile.Open(s.path, os.O_APPEND|os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			return fmt.Errorf("record session: %w", err)
		}
		s.f = f
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
			last := make([]byte, 1)
			if _, err := f.ReadAt(last, fi.Size()-1); err == nil && last[0] != '\n' {
				buf = *bytes.NewBuffer(append([]byte{'\n'}, buf.Bytes()...))
			}
		}
	}
	if n, err := s.f.Write(buf.Bytes()); err != nil {
		if n > 0 {
			// A torn tail (a full disk) would spoil the next line too; the
			// only writer may cut its own bytes off again.
			if fi, serr := s.f.Stat(); serr == nil {
				_ = s.f.Truncate(fi.Size() - int64(n))
			}
		}
		_ = s.f.Close() // reopen on the next write
		s.f = nil
		return fmt.Errorf("record session %s: %w", s.path, err)
	}
	return nil
}

// close releases the open file, if any, or the store's log.
func (s *session) close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		return s.log.Close()
	}
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// load reads the recorded conversation. A line that does not parse (a write
// cut short by a crash, garbage) is skipped, as is any system message.
func (s *session) load(ctx context.Context) (*restored, error) {
	v := newView()
	if s.log != nil {
		if err := EachLine(ctx, s.log, v.line); err != nil {
			return nil, err
		}
		return v.done(), nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := s.eachLine(v.line); err != nil {
		return nil, err
	}
	return v.done(), nil
}

// parseSessionLine is one recorded line as a message of the conversation;
// ok is false for a line that does not parse and for a system message.
func parseSessionLine(line []byte) (openai.ChatCompletionMessage, bool) {
	var m openai.ChatCompletionMessage
	if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &m) != nil || m.Role == "" || m.Role == openai.ChatMessageRoleSystem {
		return m, false
	}
	return m, true
}

// readLines reads the file's lines; a missing file has none.
func (s *session) readLines() ([][]byte, error) {
	var lines [][]byte
	err := s.eachLine(func(line []byte) { lines = append(lines, bytes.Clone(line)) })
	return lines, err
}

// maxSessionLine bounds a line read back: a longer one (written before
// replies were bounded) is read through and skipped, never held whole. (A
// variable for the tests.)
var maxSessionLine = 16 << 20

// eachLine calls fn with each line of the file, without its newline; the
// slice is fn's only during the call. A missing file has none.
func (s *session) eachLine(fn func([]byte)) error {
	f, err := statefile.Open(s.path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read session: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line := chunk
		if errors.Is(err, bufio.ErrBufferFull) || long != nil {
			if long == nil {
				long = []byte{}
			}
			if len(long) <= maxSessionLine {
				long = append(long, chunk...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			line, long = long, nil
			if len(line) > maxSessionLine {
				line = nil // too long to be a line of ours: skipped
			}
		}
		if line = bytes.TrimSuffix(line, []byte{'\n'}); len(line) > 0 {
			fn(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read session %s: %w", s.path, err)
		}
	}
}

// fileLog is the file session as a SessionLog.
type fileLog struct{ s *session }

// FileSession is the conversation kept in the file at path
// (sessions/NAME.jsonl): one JSON line per message.
func FileSession(path string) SessionLog { return fileLog{s: &session{path: path}} }

// AppendLines writes nothing once ctx is done.
func (l fileLog) AppendLines(ctx context.Context, lines [][]byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.s.appendLines(lines)
}

func (l fileLog) Lines(ctx context.Context) ([][]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return l.s.readLines()
}

func (l fileLog) EachLine(ctx context.Context, fn func([]byte)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return l.s.eachLine(fn)
}

func (l fileLog) Close() error { return l.s.close() }

// interruptedResult answers a tool call that a crash or cancel left without an answer.
const interruptedResult = "error: interrupted: this tool call did not finish"

// repairPairing makes a restored conversation valid for the API: every tool
// call answered right after its assistant message, no orphan tool messages.
// A call left without an answer is answered by recover when it can tell
// what the call did, else as interrupted.
func repairPairing(msgs []openai.ChatCompletionMessage, recover func(openai.ToolCall) (string, bool)) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for i := 0; i < len(msgs); {
		m := msgs[i]
		i++
		if m.Role == openai.ChatMessageRoleTool {
			continue // orphan: its call is not right before it
		}
		out = append(out, m)
		if m.Role != openai.ChatMessageRoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		answers := map[string]openai.ChatCompletionMessage{}
		for ; i < len(msgs) && msgs[i].Role == openai.ChatMessageRoleTool; i++ {
			if _, dup := answers[msgs[i].ToolCallID]; !dup {
				answers[msgs[i].ToolCallID] = msgs[i]
			}
		}
		for _, tc := range m.ToolCalls {
			ans, ok := answers[tc.ID]
			if !ok {
				ans = toolMessage(tc.ID, interruptedResult)
				if recover != nil {
					if text, done := recover(tc); done {
						ans = toolMessage(tc.ID, text)
					}
				}
			}
			out = append(out, ans)
		}
	}
	return out
}

func toolMessage(id, content string) openai.ChatCompletionMessage {
	if content == "" {
		content = "(no output)" // some servers refuse an empty tool message
	}
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: id, Content: content}
}
