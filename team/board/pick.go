package board

import (
	"context"
	"fmt"
	"strings"

	"github.com/agentteam/agentteam/inbox"
)

// NextClaimable is the task agent (of role) would get from ClaimNext now, without claiming it.
func (b *Board) NextClaimable(ctx context.Context, agent, role string, roles []string) (Task, bool, error) {
	if err := ctx.Err(); err != nil {
		return Task{}, false, err
	}
	f, err := b.Read(ctx)
	if err != nil {
		return Task{}, false, err
	}
	i := nextFor(&f, agent, role, roles)
	if i < 0 {
		return Task{}, false, nil
	}
	return f.Tasks[i], true, nil
}

// ClaimNext claims, in one compare-and-set, the first claimable task that
// fits role for an agent that owns no task in progress. roles are the
// team's roles, to tell a task meant for another role from one meant for anyone.
func (b *Board) ClaimNext(ctx context.Context, agent, role string, roles []string) (Task, bool, error) {
	if err := inbox.ValidateName(agent); err != nil {
		return Task{}, false, fmt.Errorf("%w: %v", ErrTaskInvalid, err)
	}
	var task Task
	found := false
	_, err := b.update(ctx, func(f *File) error {
		i := nextFor(f, agent, role, roles)
		if i < 0 {
			return errNoChange
		}
		claim(&f.Tasks[i], agent)
		task, found = f.Tasks[i], true
		return nil
	})
	return task, found, err
}

// nextFor picks the index of the task to give agent: none while it owns one
// in progress; else tasks naming its role first, then tasks for anyone, oldest first.
func nextFor(f *File, agent, role string, roles []string) int {
	for i := range f.Tasks {
		if f.Tasks[i].Status == TaskInProgress && f.Tasks[i].Owner == agent {
			return -1
		}
	}
	best, bestNamed := -1, false
	for i := range f.Tasks {
		t := &f.Tasks[i]
		if claimable(f, t) != nil {
			continue
		}
		fits, named := fitsRole(t, role, roles)
		if !fits {
			continue
		}
		if best < 0 || (named && !bestNamed) {
			best, bestNamed = i, named
		}
	}
	return best
}

// fitsRole says whether a task is for role: an explicit role hint must match;
// otherwise a task whose text names no team role is for anyone, and one that
// names roles is for those. named reports that the task names role itself.
func fitsRole(t *Task, role string, roles []string) (fits, named bool) {
	if t.Role != "" {
		ok := strings.EqualFold(t.Role, role)
		return ok, ok
	}
	text := t.Subject + "\n" + t.Description
	if role != "" && mentions(text, role) {
		return true, true
	}
	for _, r := range roles {
		if r != "" && !strings.EqualFold(r, role) && mentions(text, r) {
			return false, false
		}
	}
	return true, false
}

// mentions reports whether text contains word as a whole word, ignoring case.
func mentions(text, word string) bool {
	text, word = strings.ToLower(text), strings.ToLower(strings.TrimSpace(word))
	if word == "" {
		return false
	}
	for from := 0; ; {
		i := strings.Index(text[from:], word)
		if i < 0 {
			return false
		}
		start, end := from+i, from+i+len(word)
		if !wordByte(text, start-1) && !wordByte(text, end) {
			return true
		}
		from = start + 1
	}
}

func wordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}
