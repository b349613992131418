package gitwt

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/testutil/testkit"
)

// A model that can write the worker's or the lead's .git/config does not
// get its ssh command, proxy, credential helper, askpass, upload-pack,
// receive-pack or transport run by agentteam's push and fetch.
func TestPushAndFetchRunNoProgramOfTheRepositorys(t *testing.T) {
	testkit.SkipShort(t)
	// A remote that asks for a password: git would ask the helpers.
	asks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="team"`)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	defer asks.Close()
	cases := []struct {
		name, remote, config string
		works                bool   // the push and fetch still succeed
		alternate            bool   // the lead borrows the worker's objects
		refused              string // what each call's error says instead
	}{
		{name: "receive-pack", remote: "origin", works: true,
			config: "[remote \"origin\"]\n\treceivepack = PROG receive-pack\n"},
		{name: "upload-pack", remote: "origin", refused: `"remote.origin.uploadpack", which agentteam cannot switch off`,
			config: "[remote \"origin\"]\n\tuploadpack = PROG upload-pack\n"},
		{name: "alternate refs command", remote: "origin", works: true, alternate: true,
			config: "[core]\n\talternateRefsCommand = PROG alternate-refs\n"},
		{name: "signed push", remote: "origin", works: true,
			config: "[push]\n\tgpgSign = true\n[gpg]\n\tprogram = PROG-gpg\n"},
		{name: "ssh command", remote: "hostile",
			config: "[remote \"hostile\"]\n\turl = ssh://127.0.0.1:9/x.git\n[core]\n\tsshCommand = PROG ssh-command\n"},
		{name: "git proxy", remote: "hostile",
			config: "[remote \"hostile\"]\n\turl = git://127.0.0.1:9/x.git\n[core]\n\tgitProxy = PROG-git-proxy\n"},
		{name: "ext transport", remote: "hostile",
			config: "[remote \"hostile\"]\n\turl = ext::PROG ext\n[protocol \"ext\"]\n\tallow = always\n[protocol]\n\tallow = always\n"},
		{name: "credential helper and askpass", remote: "hostile",
			config: "[remote \"hostile\"]\n\turl = URL/x.git\n[credential]\n\thelper = PROG credential-helper\n" +
				"[credential \"URL\"]\n\thelper = PROG credential-url-helper\n[core]\n\taskPass = PROG-askpass\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hostileEnv(t)
			_, worker, lead, commit := remoteSetup(t)
			prog, marks := evilProgram(t)
			cfg := strings.NewReplacer("PROG", prog, "URL", asks.URL).Replace(c.config)
			for _, r := range []*Repo{worker, lead} {
				appendFile(t, filepath.Join(r.CommonDir, "config"), cfg)
			}
			if c.alternate {
				write(t, filepath.Join(lead.CommonDir, "objects", "info", "alternates"), filepath.Join(worker.CommonDir, "objects")+"\n")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var errs []error
			_, err := worker.Remotes().Push(ctx, c.remote, "agentteam/alice", nil)
			errs = append(errs, err)
			_, err = lead.Remotes().Fetch(ctx, c.remote, "agentteam/alice", nil)
			errs = append(errs, err)
			errs = append(errs, lead.Remotes().FetchCommit(ctx, c.remote, commit, nil))
			errs = append(errs, worker.Remotes().PushCommit(ctx, c.remote, commit, "refs/agentteam/base/x", nil))
			errs = append(errs, worker.Remotes().DeleteRef(ctx, c.remote, "refs/agentteam/base/x", "", nil))
			for i, err := range errs {
				switch {
				case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
					t.Errorf("call %d: %v, want it refused", i, err)
				case c.works && err != nil:
					t.Errorf("call %d: %v", i, err)
				}
			}
			noMarks(t, marks)
		})
	}
}

// A model that points the remote's URL at a repository of its own on this
// machine does not get that repository's hooks run by agentteam's push.
func TestAPushIntoALocalRepositoryRunsNoHookOfItsOwn(t *testing.T) {
	for _, scheme := range []string{"", "file://"} {
		t.Run("url "+scheme+"PATH", func(t *testing.T) {
			hostileEnv(t)
			_, worker, _, commit := remoteSetup(t)
			prog, marks := evilProgram(t)
			defer noMarks(t, marks) // also when a step fails the test
			made := filepath.Join(t.TempDir(), "made.git")
			git(t, worker.Top, "init", "--quiet", "--bare", made)
			for _, h := range []string{"pre-receive", "update", "post-receive", "post-update", "reference-transaction", "proc-receive"} {
				path := filepath.Join(made, "hooks", h)
				write(t, path, "#!/bin/sh\nexec '"+prog+"' hook-"+h+"\n")
				if err := os.Chmod(path, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			git(t, worker.Top, "config", "remote.origin.url", scheme+made)
			ctx := context.Background()
			if _, err := worker.Remotes().Push(ctx, "origin", "agentteam/alice", nil); err != nil {
				t.Errorf("Push: %v", err)
			}
			if err := worker.Remotes().PushCommit(ctx, "origin", commit, "refs/agentteam/base/x", nil); err != nil {
				t.Errorf("PushCommit: %v", err)
			}
			if err := worker.Remotes().DeleteRef(ctx, "origin", "refs/agentteam/base/x", "", nil); err != nil {
				t.Errorf("DeleteRef: %v", err)
			}
			if got := strings.TrimSpace(git(t, made, "rev-parse", "refs/heads/agentteam/alice")); got != commit {
				t.Errorf("the push did not land: %s", got)
			}
		})
	}
}

func TestLocalURL(t *testing.T) {
	for url, want := range map[string]bool{
		"/srv/team.git": true, "../team.git": true, "team.git": true, "file:///srv/team.git": true, "./a:b": true,
		"git@host:team.git": false, "host:team": false, "ssh://host/team.git": false, "https://host/team.git": false,
	} {
		if got := localURL(url); got != want {
			t.Errorf("localURL(%q) = %v, want %v", url, got, want)
		}
	}
}
