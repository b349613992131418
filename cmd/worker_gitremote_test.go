package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
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
		if exit.Code(err) != exit.Usage || err == nil || !strings.Contains(err.Error(), "--git-remote") || strings.Contains(err.Error(), "\n") {
			t.Errorf("--git-remote %q: exit %d, %v; want a usage error", bad, exit.Code(err), err)
		}
	}
}

// The lead's run and chat take --git-remote too (default origin, or
// [team] git_remote), for the commit a worker's teammate starts from;
// a --git-remote git could take for an option or a URL is a usage error.
func TestLeadGitRemoteFlag(t *testing.T) {
	env := map[string]string{"HOME": t.TempDir()}
	for _, cmd := range []string{"run", "chat"} {
		for args, want := range map[string]string{"": "origin", "--git-remote=team": "team", "--git-remote=": ""} {
			a := []string{cmd}
			if args != "" {
				a = append(a, args)
			}
			if cmd == "run" {
				a = append(a, "a prompt")
			}
			c, err := executeHooked(t, env, "", a...)
			var got string
			switch o := c.opts.(type) {
			case *RunOptions:
				got = o.GitRemote
			case *ChatOptions:
				got = o.GitRemote
			}
			if err != nil || got != want {
				t.Errorf("%s %s: git remote %q, %v; want %q", cmd, args, got, err, want)
			}
		}
		for _, bad := range []string{"--upload-pack=x", "ext::sh -c x", "https://h/r.git"} {
			var errb bytes.Buffer
			streams := IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &errb}
			root := newRootCmd(streams, func(k string) string { return env[k] }, rootOpts{})
			a := []string{cmd, "--workspace", t.TempDir(), "--git-remote=" + bad, "a prompt"}
			if cmd == "chat" {
				a = []string{cmd, "--workspace", t.TempDir(), "--plain", "--git-remote=" + bad}
			}
			root.SetArgs(a)
			err := root.ExecuteContext(context.Background())
			if exit.Code(err) != exit.Usage || err == nil || !strings.Contains(err.Error(), "--git-remote") || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s --git-remote %q: exit %d, %v; want a usage error", cmd, bad, exit.Code(err), err)
			}
		}
	}
	// The config file's [team] git_remote is the default.
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".config", "agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".config", "agentteam", "config.toml"), []byte("[team]\ngit_remote = \"team\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := executeHooked(t, map[string]string{"HOME": home}, "", "run", "--workspace", t.TempDir(), "a prompt")
	if o, ok := c.opts.(*RunOptions); err != nil || !ok || o.GitRemote != "team" {
		t.Errorf("run with [team] git_remote = \"team\": %+v, %v", c.opts, err)
	}
}
