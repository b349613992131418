package team

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/loop"
	"github.com/agentteam/agentteam/workspace"
)

// A session is one conversation of the lead with the person: the current
// one in sessions/lead.jsonl, and each earlier one archived as
// sessions/lead.<stamp>.jsonl when a chat or run started afresh. The index
// is derived from those files (id from the name, title from the first
// message of the person, time from the last write), so there
// is no second record to fall out of step with them after a crash.

// CurrentSessionID names the lead's current conversation.
const CurrentSessionID = "current"

// archiveStamp is the layout of an archived session's id.
const archiveStamp = "20060102T150405.000"

var sessionIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{3}$`) })

// maxSessionBytes bounds what one session file read may take in memory.
const maxSessionBytes = 64 << 20

// SessionInfo is one line of the session index.
type SessionInfo struct {
	ID string `json:"id"`
	// Title is the name the person gave it (agentteam sessions name), else
	// the first thing they said; Named says which.
	Title    string    `json:"title"`
	Named    bool      `json:"named,omitempty"`
	Time     time.Time `json:"time"`
	Messages int       `json:"messages"`
	Current  bool      `json:"current"`
}

// SessionMessage is one readable message of a session.
type SessionMessage struct {
	Role    string   `json:"role"`
	Content string   `json:"content,omitempty"`
	Tools   []string `json:"tools,omitempty"` // calls an assistant message made: name(args)
	// Inbox marks a user message that is a batch of inbox messages
	// (<message from=...> blocks), not something the person typed.
	Inbox bool `json:"inbox,omitempty"`
}

// fromInbox tells a delivered inbox batch from the person's own words.
func fromInbox(m openai.ChatCompletionMessage) bool {
	return m.Role == openai.ChatMessageRoleUser && strings.HasPrefix(strings.TrimSpace(m.Content), `<message from="`)
}

// ListSessions lists the lead's sessions, the current one first, then the
// archived ones newest first. A file that cannot be read is skipped.
func ListSessions(ws *workspace.Workspace) ([]SessionInfo, error) {
	entries, err := os.ReadDir(ws.SessionsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var cur []SessionInfo
	var old []SessionInfo
	prefix := workspace.LeadName + "."
	for _, e := range entries {
		name := e.Name()
		var id string
		switch {
		case name == workspace.LeadName+".jsonl":
			id = CurrentSessionID
		case strings.HasPrefix(name, prefix) && strings.HasSuffix(name, ".jsonl"):
			id = strings.TrimSuffix(strings.TrimPrefix(name, prefix), ".jsonl")
			if !sessionIDPattern().MatchString(id) {
				continue
			}
		default:
			continue
		}
		info, ok := sessionInfo(ws, id)
		if !ok {
			continue
		}
		if info.Current {
			cur = append(cur, info)
		} else {
			old = append(old, info)
		}
	}
	sort.Slice(old, func(i, j int) bool {
		if !old[i].Time.Equal(old[j].Time) {
			return old[i].Time.After(old[j].Time)
		}
		return old[i].ID > old[j].ID
	})
	return append(cur, old...), nil
}

// sessionInfo reads one session's index line; ok is false for a file that
// is missing, empty or not a regular file.
func sessionInfo(ws *workspace.Workspace, id string) (SessionInfo, bool) {
	path, err := sessionPath(ws, id)
	if err != nil {
		return SessionInfo{}, false
	}
	msgs, fi, err := readSession(path)
	if err != nil || fi.Size() == 0 {
		return SessionInfo{}, false
	}
	// The time of the last write: a rename (archive, restore) keeps it.
	info := SessionInfo{ID: id, Messages: len(msgs), Current: id == CurrentSessionID, Time: fi.ModTime().UTC()}
	for _, m := range msgs {
		if m.Role == openai.ChatMessageRoleUser && !fromInbox(m) && strings.TrimSpace(m.Content) != "" {
			info.Title = sessionTitle(m.Content)
			break
		}
	}
	if info.Title == "" {
		info.Title = "(no message from you)"
	}
	if b, err := statefile.ReadFile(sessionNamePath(path), 4096); err == nil {
		if name := sessionTitle(string(b)); name != "" {
			info.Title, info.Named = name, true
		}
	}
	return info, true
}

// sessionNamePath is where the name of the session in file path is kept:
// lead.name beside lead.jsonl, lead.ID.name beside lead.ID.jsonl.
func sessionNamePath(path string) string { return strings.TrimSuffix(path, ".jsonl") + ".name" }

// NameSession gives the lead's session id a name, shown as its title by
// agentteam sessions and /sessions; an empty name takes it away. The name
// goes with the conversation when it is archived or picked again.
func NameSession(ws *workspace.Workspace, id, name string) error {
	path, err := sessionPath(ws, id)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no session %s: agentteam sessions lists them", id)
	}
	name = sessionTitle(name)
	if name == "" {
		if err := os.Remove(sessionNamePath(path)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("name session %s: %w", id, err)
		}
		return nil
	}
	if err := statefile.ReplaceFile(sessionNamePath(path), []byte(name+"\n"), 0o644); err != nil {
		return fmt.Errorf("name session %s: %w", id, statefile.Refusal(err))
	}
	return nil
}

// moveSessionName moves a session's name with its file, if it has one.
func moveSessionName(from, to string) error {
	err := os.Rename(sessionNamePath(from), sessionNamePath(to))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// sessionTitle is the first line of text, cut to a width a table can hold.
func sessionTitle(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' ' // no terminal controls from a file into a table
		}
		return r
	}, s)
	const max = 60
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max-1]) + "…"
	}
	return s
}

// sessionPath is the file of a session id, refused unless the id is
// "current" or an archive stamp (so an id never names another path).
func sessionPath(ws *workspace.Workspace, id string) (string, error) {
	if id == CurrentSessionID {
		return ws.SessionPath(workspace.LeadName), nil
	}
	if !sessionIDPattern().MatchString(id) {
		return "", fmt.Errorf("%q is not a session id: agentteam sessions lists them", id)
	}
	return ws.SessionPath(workspace.LeadName + "." + id), nil
}

// readSession reads a session file (never through a link): the messages
// that parse, system messages left out.
func readSession(path string) ([]openai.ChatCompletionMessage, os.FileInfo, error) {
	f, fi, err := statefile.OpenStat(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > maxSessionBytes {
		return nil, nil, fmt.Errorf("session %s is larger than %d MB", path, maxSessionBytes>>20)
	}
	var msgs []openai.ChatCompletionMessage
	r := bufio.NewReader(f)
	for {
		line, rerr := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m openai.ChatCompletionMessage
			if json.Unmarshal(line, &m) == nil && m.Role != "" && m.Role != openai.ChatMessageRoleSystem {
				msgs = append(msgs, m)
			}
		}
		if rerr != nil {
			break
		}
	}
	return msgs, fi, nil
}

// ReadSession is a session's messages, readable: tool calls as name(args).
func ReadSession(ws *workspace.Workspace, id string) ([]SessionMessage, error) {
	path, err := sessionPath(ws, id)
	if err != nil {
		return nil, err
	}
	msgs, _, err := readSession(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no session %s: agentteam sessions lists them", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read session %s: %w", id, statefile.Refusal(err))
	}
	out := make([]SessionMessage, 0, len(msgs))
	for _, m := range msgs {
		sm := SessionMessage{Role: m.Role, Content: m.Content, Inbox: fromInbox(m)}
		for _, tc := range m.ToolCalls {
			sm.Tools = append(sm.Tools, tc.Function.Name+"("+tc.Function.Arguments+")")
		}
		out = append(out, sm)
	}
	return out, nil
}

// RestoreSession makes an archived session the lead's current conversation:
// the current one is archived first (stamped now), so nothing is lost. It
// must run before the team is opened (a running lead writes lead.jsonl).
func RestoreSession(ws *workspace.Workspace, id string, now time.Time) error {
	if id == CurrentSessionID {
		return nil
	}
	src, err := sessionPath(ws, id)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(src)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no session %s: agentteam sessions lists them", id)
	}
	if err != nil {
		return fmt.Errorf("restore session %s: %w", id, err)
	}
	if err := statefile.CheckRegular(src, fi); err != nil {
		return fmt.Errorf("restore session %s: %w", id, statefile.Refusal(err))
	}
	cur := ws.SessionPath(workspace.LeadName)
	if _, err := os.Lstat(cur); err == nil {
		if err := archiveLead(ws, now); err != nil {
			return err
		}
	}
	if err := os.Rename(src, cur); err != nil {
		return fmt.Errorf("restore session %s: %w", id, err)
	}
	if err := moveSessionName(src, cur); err != nil {
		return fmt.Errorf("restore session %s: its name: %w", id, err)
	}
	// Archived again, it takes back this id: sessions show ID keeps working.
	if err := statefile.ReplaceFile(currentIDPath(ws), []byte(id+"\n"), 0o644); err != nil {
		return fmt.Errorf("restore session %s: %w", id, err)
	}
	return nil
}

// currentIDPath holds the id the current conversation had as an earlier
// one, when it was picked from them.
func currentIDPath(ws *workspace.Workspace) string {
	return filepath.Join(ws.SessionsDir(), workspace.LeadName+".id")
}

// archiveLead moves the current conversation aside as an earlier one:
// under the id it had before it was picked, else under now's stamp.
func archiveLead(ws *workspace.Workspace, now time.Time) error {
	cur := ws.SessionPath(workspace.LeadName)
	dst := ""
	if b, err := statefile.ReadFile(currentIDPath(ws), 64); err == nil {
		if p, err := sessionPath(ws, strings.TrimSpace(string(b))); err == nil && p != cur {
			if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
				dst = p
			}
		}
	}
	if dst == "" {
		var err error
		if dst, err = freeArchivePath(ws, now); err != nil {
			return err
		}
	}
	if err := os.Rename(cur, dst); err != nil {
		return fmt.Errorf("archive the current session: %w", err)
	}
	if err := moveSessionName(cur, dst); err != nil {
		return fmt.Errorf("archive the current session's name: %w", err)
	}
	if err := os.Remove(currentIDPath(ws)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("archive the current session: %w", err)
	}
	return nil
}

// freeArchivePath is lead.<stamp>.jsonl for now, moved on by a millisecond
// while that name is taken.
func freeArchivePath(ws *workspace.Workspace, now time.Time) (string, error) {
	for i := 0; i < 1000; i++ {
		p := ws.SessionPath(workspace.LeadName + "." + now.UTC().Add(time.Duration(i)*time.Millisecond).Format(archiveStamp))
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
	}
	return "", fmt.Errorf("archive the current session: no free name")
}

// SwitchSession makes an archived session the lead's conversation while
// the team runs: the current one is archived (stamped now), the chosen one
// restored as RestoreSession does, and the lead reads it back, so its next
// turn goes on from there. The teammates are left as they are. It refuses,
// with a sentence, while the lead or a teammate of this process works: the
// person waits or interrupts first.
func (t *Team) SwitchSession(id string, now time.Time) error {
	id = strings.TrimSpace(id)
	if id == CurrentSessionID {
		return errors.New("that is the conversation open now")
	}
	if _, err := sessionPath(t.ws, id); err != nil {
		return err
	}
	if busy := t.roster.working(); len(busy) > 0 {
		return fmt.Errorf("%s working: wait until the team is idle (or /shutdown), then switch", strings.Join(busy, ", ")+isOrAre(len(busy)))
	}
	err := t.lead.Reload(func() error { return RestoreSession(t.ws, id, now) })
	if errors.Is(err, loop.ErrCycleRunning) {
		return errors.New("the lead is working: wait for its answer or interrupt it (esc), then switch")
	}
	return err
}

func isOrAre(n int) string {
	if n == 1 {
		return " is"
	}
	return " are"
}

// working names the teammates of this process in a cycle or queued for one.
func (r *roster) working() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for name, m := range r.members {
		if m.cycleCancel != nil || m.status == StatusQueued {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// SessionStore keeps the teammates' conversations when they are not files
// of the workspace: a log per teammate (loop.SessionLog), and the archive
// of an earlier conversation when a teammate is spawned afresh under a
// name used before, which must stay readable.
type SessionStore interface {
	SessionLog(name string) loop.SessionLog
	Archive(name string, now time.Time) error
}

// teammateSessionPath is name's session file; "" when Options.Sessions
// keeps the conversation elsewhere.
func (t *Team) teammateSessionPath(name string) string {
	if t.opts.Sessions != nil {
		return ""
	}
	return t.ws.SessionPath(name)
}

// teammateSession is name's conversation in Options.Sessions; nil for
// the file.
func (t *Team) teammateSession(name string) loop.SessionLog {
	if t.opts.Sessions == nil {
		return nil
	}
	return t.opts.Sessions.SessionLog(name)
}

// archiveTeammateSession sets name's earlier conversation aside before it
// is spawned afresh. A file that cannot be moved is left (as before); a
// store that cannot archive fails the spawn, which would otherwise
// continue the earlier conversation.
func (t *Team) archiveTeammateSession(name string, now time.Time) error {
	if t.opts.Sessions == nil {
		archiveSession(t.ws.SessionPath(name), now)
		return nil
	}
	if err := t.opts.Sessions.Archive(name, now); err != nil {
		return fmt.Errorf("start %s afresh: %w", name, err)
	}
	return nil
}
