package gitwt

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The person's own filter (their global config, like git-lfs's) still
// runs, and wins over the repository's filter of the same name; it never
// sees the model's key nor any other secret of agentteam's environment.
func TestThePersonsFilterRunsWithoutSecrets(t *testing.T) {
	hostileEnv(t)
	dir, r := newRepo(t)
	prog, marks := evilProgram(t)
	envFile := filepath.Join(t.TempDir(), "env")
	good := filepath.Join(t.TempDir(), "good")
	write(t, good, "#!/bin/sh\nenv > '"+envFile+"'\ncat\n")
	if err := os.Chmod(good, 0o755); err != nil {
		t.Fatal(err)
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	write(t, global, "[filter \"lfs\"]\n\tclean = "+good+"\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	write(t, filepath.Join(dir, ".git", "info", "attributes"), "*.bin filter=lfs\n")
	ctx := context.Background()
	w, err := r.Add(ctx, filepath.Join(dir, ".agentteam", "worktrees", "eve"), "agentteam/eve")
	if err != nil {
		t.Fatal(err)
	}
	commit := func(file string) string {
		t.Helper()
		_ = os.Remove(envFile)
		write(t, filepath.Join(w.Path, file), file+"\n")
		if _, err := w.CommitAll(ctx, "eve"); err != nil {
			t.Fatal(err)
		}
		env, err := os.ReadFile(envFile)
		if err != nil {
			t.Fatalf("the person's filter did not run: %v", err)
		}
		return string(env)
	}
	env := commit("one.bin")
	for name, value := range secrets {
		if strings.Contains(env, value) {
			t.Errorf("the filter git ran saw %s", name)
		}
	}
	if !strings.Contains(env, "PATH=") {
		t.Errorf("the filter had no PATH:\n%s", env)
	}
	appendFile(t, filepath.Join(dir, ".git", "config"), "[filter \"lfs\"]\n\tclean = "+prog+" repository-clean\n")
	commit("two.bin")
	noMarks(t, marks)
}

// Push and fetch reach the person's remote with their ssh agent's socket
// (and proxies), and still without any secret; local commands get neither.
func TestOnlyPushAndFetchGetTheSSHAgent(t *testing.T) {
	hostileEnv(t)
	t.Setenv("SSH_AUTH_SOCK", "/run/agent.sock")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:1")
	asks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="team"`)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	defer asks.Close()
	_, worker, _, _ := remoteSetup(t)
	dir := t.TempDir()
	helperEnv, filterEnv := filepath.Join(dir, "helper.env"), filepath.Join(dir, "filter.env")
	helper, filter := filepath.Join(dir, "helper"), filepath.Join(dir, "filter")
	write(t, helper, "#!/bin/sh\nenv > '"+helperEnv+"'\n")
	write(t, filter, "#!/bin/sh\nenv > '"+filterEnv+"'\ncat\n")
	for _, p := range []string{helper, filter} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	global := filepath.Join(dir, "gitconfig")
	write(t, global, "[credential]\n\thelper = "+helper+"\n[filter \"mine\"]\n\tclean = "+filter+"\n")
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	git(t, worker.Top, "remote", "add", "asks", asks.URL+"/x.git")
	write(t, filepath.Join(worker.Top, ".git", "info", "attributes"), "* filter=mine\n")
	write(t, filepath.Join(worker.Top, "notes.txt"), "one\ntwo\nthreX\n") // same size: git must read it
	ctx := context.Background()
	if _, err := worker.Dirty(ctx); err != nil {
		t.Fatal(err)
	}
	_, _ = worker.Remotes().Push(ctx, "asks", "agentteam/alice", nil) // refused by the server
	for file, wantAgent := range map[string]bool{helperEnv: true, filterEnv: false} {
		env, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("the person's program did not run: %v", err)
		}
		if got := strings.Contains(string(env), "SSH_AUTH_SOCK=/run/agent.sock"); got != wantAgent {
			t.Errorf("%s: SSH_AUTH_SOCK there = %v, want %v", filepath.Base(file), got, wantAgent)
		}
		for name, value := range secrets {
			if strings.Contains(string(env), value) {
				t.Errorf("%s saw %s", filepath.Base(file), name)
			}
		}
	}
}
