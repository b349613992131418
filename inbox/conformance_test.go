package inbox_test

import (
	"testing"
	"time"

	"github.com/agentteam/agentteam/inbox"
	"github.com/agentteam/agentteam/internal/store/storetest"
)

// openFileStore opens another Store on dir, as another process would; the
// poll backstop is an hour so that only fsnotify can wake a watcher.
func openFileStore(dir string) func(t *testing.T) storetest.Mailbox {
	return func(t *testing.T) storetest.Mailbox {
		s := inbox.NewStoreWithOptions(dir, inbox.StoreOptions{PollInterval: time.Hour})
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
}

func TestFileStoreKeepsTheMailboxContract(t *testing.T) {
	storetest.RunMailbox(t, openFileStore(t.TempDir()))
}

func BenchmarkFileStoreWatch(b *testing.B) {
	dir := b.TempDir()
	storetest.BenchmarkWatch(b, func(b *testing.B) storetest.Mailbox {
		s := inbox.NewStoreWithOptions(dir, inbox.StoreOptions{PollInterval: time.Hour})
		b.Cleanup(func() { _ = s.Close() })
		return s
	})
}
