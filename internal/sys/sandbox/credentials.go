package sandbox

import "path/filepath"

// credentials are where, under a person's home, tools keep what signs
// them in: keys, tokens, passwords. Commands never read them.
var credentials = []string{
	".ssh", ".aws", ".config/gcloud", ".azure", ".kube", ".gnupg", ".config/gh",
	".docker/config.json", ".netrc", ".git-credentials",
}

// Credentials are the files and directories that commands cannot read
// (Policy.Hidden), besides those the caller adds: the credentials under
// the home getenv names, and the sockets of the agents that sign for the
// person (ssh-agent's SSH_AUTH_SOCK, gpg-agent's in XDG_RUNTIME_DIR):
// a command that reached one would sign in as the person.
func Credentials(getenv func(string) string) []string {
	var out []string
	if home := getenv("HOME"); filepath.IsAbs(home) {
		for _, rel := range credentials {
			out = append(out, filepath.Join(home, rel))
		}
	}
	if sock := getenv("SSH_AUTH_SOCK"); filepath.IsAbs(sock) {
		out = append(out, sock)
	}
	if run := getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(run) {
		out = append(out, filepath.Join(run, "gnupg"))
	}
	return out
}
