package natsconn

import (
	"errors"
	"os"
	"path/filepath"
)

// CredsDir is where `agentteam serve` keeps the credentials it makes and
// where clients of this host look for them: $XDG_STATE_HOME/agentteam,
// else ~/.local/state/agentteam. Outside every workspace, so no teammate
// reads them as a file of its work.
func CredsDir(getenv func(string) string) (string, error) {
	if x := getenv("XDG_STATE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "agentteam"), nil
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".local", "state", "agentteam"), nil
	}
	return "", errors.New("neither XDG_STATE_HOME nor HOME is set: there is no state directory for the NATS credentials")
}

// CredsFile is the credentials file in dir of team's user, or with team
// "" of the user that reaches every team.
func CredsFile(dir, team string) string {
	if team == "" {
		return filepath.Join(dir, "nats.creds")
	}
	return filepath.Join(dir, "nats-"+team+".creds")
}

// RoleCredsFile is CredsFile for role: the lead's is CredsFile itself,
// a worker's or a person's is named for its role after a '.', which no
// team name holds.
func RoleCredsFile(dir, team string, role Role) string {
	if role == RoleLead || role == "" {
		return CredsFile(dir, team)
	}
	if team == "" {
		return filepath.Join(dir, "nats."+string(role)+".creds")
	}
	return filepath.Join(dir, "nats-"+team+"."+string(role)+".creds")
}

// FindCreds is the credentials file this host's serve made for team's
// clients in dir: team's own, else the one of every team; "" for none.
func FindCreds(dir, team string) string { return FindRoleCreds(dir, team, RoleLead) }

// FindRoleCreds is FindCreds for a client in role: role's own file of
// team, else of every team, else the lead's that FindCreds finds.
func FindRoleCreds(dir, team string, role Role) string {
	paths := []string{RoleCredsFile(dir, team, role), RoleCredsFile(dir, "", role)}
	if role != RoleLead && role != "" {
		paths = append(paths, CredsFile(dir, team), CredsFile(dir, ""))
	}
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			return p
		}
	}
	return ""
}
