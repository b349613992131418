package natsserver

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/nats-io/nkeys"

	"github.com/agentteam/agentteam/internal/store/natsconn"
)

// MakeCreds returns the public key of the nkey user whose seed path holds,
// making the seed first when there is none (the file 0600, its directory
// 0700). Several serves starting at once agree on one seed.
func MakeCreds(path string) (string, error) {
	if err := privateDir(filepath.Dir(path)); err != nil {
		return "", err
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := writeSeed(path); err != nil {
			return "", err
		}
	}
	o, err := natsconn.ReadCredsFile(path)
	if err != nil {
		return "", err
	}
	if o.NKeySeed == "" {
		return "", fmt.Errorf("credentials file %s holds a user and password, not the nkey seed agentteam serve makes: remove it", path)
	}
	kp, err := nkeys.FromSeed([]byte(o.NKeySeed))
	if err != nil {
		return "", fmt.Errorf("credentials file %s: the nkey seed is not valid", path)
	}
	return kp.PublicKey()
}

// writeSeed writes a new nkey user seed to path unless another process
// wrote one first: the seed goes to a temporary file, linked in place.
func writeSeed(path string) error {
	kp, err := nkeys.CreateUser()
	if err != nil {
		return fmt.Errorf("make NATS credentials: %w", err)
	}
	seed, err := kp.Seed()
	if err != nil {
		return fmt.Errorf("make NATS credentials: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".creds-*")
	if err != nil {
		return fmt.Errorf("make NATS credentials in %s: %w", filepath.Dir(path), err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(append([]byte("# agentteam serve's nkey seed: keep it secret\n"), append(seed, '\n')...))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Link(tmp.Name(), path)
	}
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("make NATS credentials %s: %w", path, err)
	}
	return nil
}

// privateDir makes dir (0700) if missing and refuses one that is a link
// or not a directory; one others may enter is closed to them.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("the state directory %s for NATS credentials: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("the state directory %s for NATS credentials: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("the state directory %s for NATS credentials is not a directory (a link?): remove it", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("the state directory %s for NATS credentials may be read by others: %w", dir, err)
		}
	}
	return nil
}
