package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/agentteam/agentteam/internal/store/statefile"
	"github.com/agentteam/agentteam/internal/sys/permission"
)

// Permissions is the [permissions] table: the mode and the rules. The
// mode is the project file's if it sets one; the rules of both files apply.
type Permissions struct {
	Mode Value[permission.Mode]
	// Timeout bounds the wait for an answer to an ask.
	Timeout          Value[time.Duration]
	Allow, Ask, Deny []permission.Entry
}

type rawPermissions struct {
	Mode    *string  `toml:"mode"`
	Timeout *string  `toml:"timeout"`
	Allow   []string `toml:"allow"`
	Ask     []string `toml:"ask"`
	Deny    []string `toml:"deny"`
}

func (p *Permissions) merge(f *rawPermissions, src Source) {
	if f.Mode != nil {
		p.Mode = Value[permission.Mode]{permission.Mode(*f.Mode), src}
	}
	setDuration(&p.Timeout, f.Timeout, src)
	add := func(dst *[]permission.Entry, rules []string) {
		for _, s := range rules {
			r, _ := permission.ParseRule(s) // checked in check
			*dst = append(*dst, permission.Entry{Rule: r, From: string(src)})
		}
	}
	add(&p.Allow, f.Allow)
	add(&p.Ask, f.Ask)
	add(&p.Deny, f.Deny)
}

// check refuses rules and modes no run can use. (A project file's allow
// rules and looser mode wait for the person's trust: held.go.)
func (f *rawPermissions) check(fail func(toml.Key, string, ...any) error) error {
	key := func(k string) toml.Key { return toml.Key{"permissions", k} }
	if f.Mode != nil {
		if _, err := permission.ParseMode(*f.Mode); err != nil {
			return fail(key("mode"), "must be \"ask\", \"auto-edit\" or \"yolo\", not %q", *f.Mode)
		}
	}
	if f.Timeout != nil {
		if d, err := time.ParseDuration(*f.Timeout); err != nil || d <= 0 {
			return fail(key("timeout"), "must be a positive duration such as \"90s\" or \"5m\", not %q", *f.Timeout)
		}
	}
	for _, l := range []struct {
		name  string
		rules []string
	}{{"allow", f.Allow}, {"ask", f.Ask}, {"deny", f.Deny}} {
		for _, s := range l.rules {
			if _, err := permission.ParseRule(s); err != nil {
				return fail(key(l.name), "%v", err)
			}
		}
	}
	return nil
}

// AddAllowRule adds rule to the allow list of the project file in
// workspace, creating the file or the table if needed, and keeps every
// other line as it was. The file is checked again before it is replaced.
// The person's own rule keeps the file trusted if it was, or if it said
// nothing that waits for trust; otherwise applies is false: the rule
// waits for agentteam trust with the rest.
func AddAllowRule(getenv func(string) string, workspace string, rule permission.Rule) (applies bool, err error) {
	path := ProjectPath(workspace)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	unlock, err := statefile.Lock(path)
	if err != nil {
		return false, err
	}
	defer unlock()
	data, err := statefile.ReadFile(path, 1<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", path, statefile.Refusal(err))
	}
	text := string(data)
	f, err := parse(path, text, true)
	if err != nil {
		return false, err
	}
	trusted, _ := isTrusted(getenv, workspace, sum(data))
	keepTrust := trusted || f.held(projectSource, Value[permission.Mode]{}).IsEmpty()
	if slices.Contains(f.Permissions.Allow, rule.String()) {
		return trusted, nil
	}
	updated, err := insertAllow(text, rule.String())
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	f, err = parse(path, updated, true)
	if err != nil || !slices.Contains(f.Permissions.Allow, rule.String()) {
		return false, fmt.Errorf("%s: could not add %q to [permissions] allow without breaking the file; add it by hand", path, rule.String())
	}
	if err := statefile.WriteFileAtomic(path, []byte(updated), 0o644); err != nil {
		return false, err
	}
	if !keepTrust {
		return false, nil
	}
	key, err := workspaceKey(workspace)
	if err == nil {
		err = Trust(getenv, &Project{Workspace: key, SHA256: sum([]byte(updated))})
	}
	if err != nil {
		return false, fmt.Errorf("added %q to %s, but %w", rule.String(), path, err)
	}
	return true, nil
}

var (
	allowLineRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*allow[ \t]*=[ \t]*\[`) })
	permHeaderRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*permissions[ \t]*\][ \t]*(#.*)?$`)
	})
	dottedRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*permissions[ \t]*\.`) })
)

// insertAllow writes rule into text's [permissions] allow list: at the
// head of an existing list, as a new key under an existing header, or as
// a new table at the end. The caller checks the result parses.
func insertAllow(text, rule string) (string, error) {
	q := strconv.Quote(rule)
	if h := permHeaderRE().FindStringIndex(text); h != nil {
		section := text[h[1]:]
		if next := regexp.MustCompile(`(?m)^[ \t]*\[`).FindStringIndex(section); next != nil {
			section = section[:next[0]]
		}
		if a := allowLineRE().FindStringIndex(section); a != nil {
			at := h[1] + a[1]
			return text[:at] + q + ", " + text[at:], nil
		}
		return text[:h[1]] + "\nallow = [" + q + "]" + text[h[1]:], nil
	}
	if dottedRE().MatchString(text) {
		return "", errors.New("[permissions] is written with dotted keys")
	}
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + "\n[permissions]\nallow = [" + q + "]\n", nil
}
