package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The worker pushes to origin unless told another remote, or none; a
// --git-remote git could take for an option or a URL is a usage error.
func TestWorkerGitRemoteFlag(t *testing.T) {
	env := map[string]string{"AGENTTEAM_STORE": "nats://h:4222/alpha", "HOME": t.TempDir()}
	for args, want := range map[string]string{"": "origin", "--git-remote=team": "team", "--git-remote=": ""} {
		a := []string{"worker"}
		if args != "" {
			a = append(a, args)
		}
		o, err := executeWorker(t, env, a...)
		if err != nil || o.GitRemote != want {
			t.Errorf("worker %s: git remote %q, %v; want %q", args, o.GitRemote, err, want)
		}
	}
	for _, bad := range []string{"--upload-pack=x", "ext::sh -c x", "https://h/r.git"} {
		var errb bytes.Buffer
		streams := IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb}
		root := newRootCmd(streams, func(k string) string { return env[k] }, rootOpts{})
		root.SetArgs([]string{"worker", "--workspace", t.TempDir(), "--git-remote=" + bad})
		err := root.ExecuteContext(context.Background())
		if ExitCode(err) != ExitUsage || err == nil || !strings.Contains(err.Error(), "--git-remote") || strings.Contains(err.Error(), "\n") {
			t.Errorf("--git-remote %q: exit %d, %v; want a usage error", bad, ExitCode(err), err)
		}
	}
}
