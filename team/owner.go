package team

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gofrs/flock"
)

// ownerLock makes one process at a time the runner of a workspace's team:
// two leads sharing one lead inbox would steal each other's messages. The
// kernel releases the lock when the process dies, so a crash never blocks
// the next run.
type ownerLock struct {
	fl   *flock.Flock
	path string
}

func acquireOwner(teamDir string) (*ownerLock, error) {
	path := filepath.Join(teamDir, "owner.lock")
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		who := "another agentteam process"
		if data, err := os.ReadFile(path + ".pid"); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				who = fmt.Sprintf("another agentteam process (pid %d)", pid)
			}
		}
		return nil, fmt.Errorf("%s is already running the team in this workspace: use agentteam send, inbox and team to join in from here", who)
	}
	// The pid file only names the owner in the message above; the lock is the truth.
	_ = os.WriteFile(path+".pid", []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644)
	return &ownerLock{fl: fl, path: path}, nil
}

func (o *ownerLock) release() {
	if o == nil {
		return
	}
	_ = os.Remove(o.path + ".pid")
	_ = o.fl.Unlock()
}
