package sandbox

import "path/filepath"

// credentials are where, under a person's home, tools keep what signs
// them in: keys, tokens, passwords. Commands never read them.
var credentials = []string{
	".ssh", ".aws", ".config/gcloud", ".azure", ".kube", ".gnupg", ".config/gh",
	".docker/config.json", ".netrc", ".git-credentials",
}

// Credentials are the files and directories under home that commands
// cannot read (Policy.Hidden), besides those the caller adds; none
// without a home.
func Credentials(home string) []string {
	if home == "" || !filepath.IsAbs(home) {
		return nil
	}
	out := make([]string, len(credentials))
	for i, rel := range credentials {
		out[i] = filepath.Join(home, rel)
	}
	return out
}
