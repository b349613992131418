package natsserver

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsstore"
)

// ReadUsersFile reads the teams' credentials a server accepts, one user a
// line: "TEAM USER PASSWORD" (the password may be a bcrypt hash) or "TEAM
// NKEY" (an nkey user's public key, U…), either followed by role=lead,
// role=worker or role=person (none: lead); blank lines and # comments are
// skipped. A file others may read is refused, as ssh refuses a key.
func ReadUsersFile(path string) ([]TeamUser, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("users file %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("users file %s may be read by others (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("users file: %w", err)
	}
	var users []TeamUser
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		var u TeamUser
		if last := f[len(f)-1]; strings.HasPrefix(last, "role=") {
			r, err := natsconn.ParseRole(strings.TrimPrefix(last, "role="))
			if err != nil || r != natsconn.Role(strings.TrimPrefix(last, "role=")) {
				return nil, fmt.Errorf("users file %s, line %d: role= is lead, worker or person", path, n)
			}
			u.Role, f = r, f[:len(f)-1]
		}
		switch len(f) {
		case 2:
			u.Team, u.NKey = f[0], f[1]
		case 3:
			u.Team, u.User, u.Password = f[0], f[1], f[2]
		default:
			// The line may hold a password: never echo it.
			return nil, fmt.Errorf("users file %s, line %d: want TEAM USER PASSWORD or TEAM NKEY, and role=ROLE or none (%d fields)", path, n, len(f))
		}
		if err := natsstore.CheckTeamName(u.Team); err != nil {
			return nil, fmt.Errorf("users file %s, line %d: %w", path, n, err)
		}
		if u.User != "" {
			if err := natsstore.CheckToken("user", u.User); err != nil {
				return nil, fmt.Errorf("users file %s, line %d: %w", path, n, err)
			}
		}
		users = append(users, u)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("users file %s: %w", path, err)
	}
	if len(users) == 0 {
		return nil, fmt.Errorf("users file %s lists no user", path)
	}
	return users, nil
}
