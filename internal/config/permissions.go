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

	"github.com/agentteam/agentteam/internal/permission"
	"github.com/agentteam/agentteam/internal/statefile"
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

// check refuses rules and modes no run can use, and what a project file
// must not grant itself: a cloned repository may not turn every ask off
// (mode yolo, or an allow rule that matches every command).
func (f *rawPermissions) check(fail func(toml.Key, string, ...any) error, project bool) error {
	key := func(k string) toml.Key { return toml.Key{"permissions", k} }
	if f.Mode != nil {
		m, err := permission.ParseMode(*f.Mode)
		if err != nil {
			return fail(key("mode"), "must be \"ask\", \"auto-edit\" or \"yolo\", not %q", *f.Mode)
		}
		if project && m == permission.ModeYolo {
			return fail(key("mode"), "= \"yolo\" is not read from a project file: a cloned repository could turn every ask off; set it in your user file (%s) or pass --permission-mode yolo", userPathHint)
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
			r, err := permission.ParseRule(s)
			if err != nil {
				return fail(key(l.name), "%v", err)
			}
			if project && l.name == "allow" && r.Tool == "bash" && r.MatchesEverything() {
				return fail(key(l.name), "holds %q, which allows every command; a project file may not: a cloned repository could turn every ask off", s)
			}
		}
	}
	return nil
}

// AddAllowRule adds rule to the allow list of the project file in
// workspace, creating the file or the table if needed, and keeps every
// other line as it was. The file is checked again before it is replaced.
func AddAllowRule(workspace string, rule permission.Rule) error {
	path := ProjectPath(workspace)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	unlock, err := statefile.Lock(path)
	if err != nil {
		return err
	}
	defer unlock()
	data, err := statefile.ReadFile(path, 1<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, statefile.Refusal(err))
	}
	text := string(data)
	if f, err := parse(path, text, true); err != nil {
		return err
	} else if slices.Contains(f.Permissions.Allow, rule.String()) {
		return nil
	}
	updated, err := insertAllow(text, rule.String())
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	f, err := parse(path, updated, true)
	if err != nil || !slices.Contains(f.Permissions.Allow, rule.String()) {
		return fmt.Errorf("%s: could not add %q to [permissions] allow without breaking the file; add it by hand", path, rule.String())
	}
	return statefile.WriteFileAtomic(path, []byte(updated), 0o644)
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
