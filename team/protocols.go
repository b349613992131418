package team

import (
	"fmt"
)

// member returns a teammate this process runs.
func (r *roster) member(name string) (*member, error) {
	t := r.t
	r.mu.Lock()
	m, ok := r.members[name]
	r.mu.Unlock()
	if ok {
		return m, nil
	}
	if err := CheckRecipient(t.reg, name); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s is not run by this agentteam process", name)
}

func (r *roster) statusOf(m *member) Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return m.status
}

// expiredMember is the teammate of a request whose deadline passed, or
// nil when the team is stopping (or the teammate is not run here).
func (r *roster) expiredMember(name string) *member {
	t := r.t
	if t.stopped() {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.members[name]
}
