// Package sessions keeps the lead's conversations with the person in the
// workspace: the current one and each earlier one archived, with the
// names the person gave them; listed, read, restored and archived.
//
//   - The current one is sessions/lead.jsonl; an earlier one is
//     sessions/lead.<stamp>.jsonl, its id the stamp.
//   - The index is derived from those files (id from the name, title from
//     the first message of the person, time from the last write), so
//     there is no second record to fall out of step with them after a
//     crash.
package sessions

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

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/workspace"
)

// CurrentID names the lead's current conversation.
const CurrentID = "current"

// archiveStamp is the layout of an archived session's id.
const archiveStamp = "20060102T150405.000"

var sessionIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{3}$`) })

// maxSessionBytes bounds what one session file read may take in memory.
const maxSessionBytes = 64 << 20

// Info is one line of the session index.
type Info struct {
	ID string `json:"id"`
	// Title is the name the person gave it (agentteam sessions name), else
	// the first thing they said; Named says which.
	Title    string    `json:"title"`
	Named    bool      `json:"named,omitempty"`
	Time     time.Time `json:"time"`
	Messages int       `json:"messages"`
	Current  bool      `json:"current"`
}

// Message is one readable message of a session.
type Message struct {
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

// List lists the lead's sessions, the current one first, then the
// archived ones newest first. A file that cannot be read is skipped.
func List(ws *workspace.Workspace) ([]Info, error) {
	entries, err := os.ReadDir(ws.SessionsDir())
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sessions: %w", err)
	}
	var cur []Info
	var old []Info
	prefix := inbox.LeadName + "."
	for _, e := range entries {
		name := e.Name()
		var id string
		switch {
		case name == inbox.LeadName+".jsonl":
			id = CurrentID
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
func sessionInfo(ws *workspace.Workspace, id string) (Info, bool) {
	path, err := Path(ws, id)
	if err != nil {
		return Info{}, false
	}
	msgs, fi, err := readSession(path)
	if err != nil || fi.Size() == 0 {
		return Info{}, false
	}
	// The time of the last write: a rename (archive, restore) keeps it.
	info := Info{ID: id, Messages: len(msgs), Current: id == CurrentID, Time: fi.ModTime().UTC()}
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

// Name gives the lead's session id a name, shown as its title by
// agentteam sessions and /sessions; an empty name takes it away. The name
// goes with the conversation when it is archived or picked again.
func Name(ws *workspace.Workspace, id, name string) error {
	path, err := Path(ws, id)
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

// Path is the file of a session id, refused unless the id is
// "current" or an archive stamp (so an id never names another path).
func Path(ws *workspace.Workspace, id string) (string, error) {
	if id == CurrentID {
		return ws.SessionPath(inbox.LeadName), nil
	}
	if !sessionIDPattern().MatchString(id) {
		return "", fmt.Errorf("%q is not a session id: agentteam sessions lists them", id)
	}
	return ws.SessionPath(inbox.LeadName + "." + id), nil
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

// Read is a session's messages, readable: tool calls as name(args).
func Read(ws *workspace.Workspace, id string) ([]Message, error) {
	path, err := Path(ws, id)
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
	out := make([]Message, 0, len(msgs))
	for _, m := range msgs {
		sm := Message{Role: m.Role, Content: m.Content, Inbox: fromInbox(m)}
		for _, tc := range m.ToolCalls {
			sm.Tools = append(sm.Tools, tc.Function.Name+"("+tc.Function.Arguments+")")
		}
		out = append(out, sm)
	}
	return out, nil
}

// Restore makes an archived session the lead's current conversation:
// the current one is archived first (stamped now), so nothing is lost. It
// must run before the team is opened (a running lead writes lead.jsonl).
func Restore(ws *workspace.Workspace, id string, now time.Time) error {
	if id == CurrentID {
		return nil
	}
	src, err := Path(ws, id)
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
	cur := ws.SessionPath(inbox.LeadName)
	if _, err := os.Lstat(cur); err == nil {
		if err := ArchiveLead(ws, now); err != nil {
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
	return filepath.Join(ws.SessionsDir(), inbox.LeadName+".id")
}

// ArchiveLead moves the current conversation aside as an earlier one:
// under the id it had before it was picked, else under now's stamp.
func ArchiveLead(ws *workspace.Workspace, now time.Time) error {
	cur := ws.SessionPath(inbox.LeadName)
	dst := ""
	if b, err := statefile.ReadFile(currentIDPath(ws), 64); err == nil {
		if p, err := Path(ws, strings.TrimSpace(string(b))); err == nil && p != cur {
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
		p := ws.SessionPath(inbox.LeadName + "." + now.UTC().Add(time.Duration(i)*time.Millisecond).Format(archiveStamp))
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			return p, nil
		}
	}
	return "", fmt.Errorf("archive the current session: no free name")
}

// ArchiveFile moves an earlier teammate's conversation aside, so a
// respawned teammate of the same name starts fresh and nothing is lost.
func ArchiveFile(path string, now time.Time) {
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return
	}
	dst := strings.TrimSuffix(path, ".jsonl") + "." + now.Format("20060102T150405.000") + ".jsonl"
	_ = os.Rename(path, filepath.Clean(dst))
}
