package gitwt

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A model that can write the worker's or the lead's .git/config does not
// get its ssh command, proxy, credential helper, askpass, upload-pack,
// receive-pack or transport run by agentteam's push and fetch.
func TestPushAndFetchRunNoProgramOfTheRepositorys(t *testing.T) {
	// A remote that asks for a password: git would ask the helpers.
	asks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="team"`)
		http.Error(w, "who are you", http.StatusUnauthorized)
	}))
	defer asks.Close()
	cases := []struct {
		name, remote, config string
		works                bool // the push and fetch still succeed
	}{
		{name: "upload-pack and receive-pack", remote: "origin", works: true,
			config: "[remote \"origin\"]\n\tuploadpack = PROG upload-pack\n\treceivepack = PROG receive-pack\n"},
		{name: "signed push", remote: "origin", works: true,
			config: "[push]\n\tgpgSign = true\n[gpg]\n\tprogram = PROG-gpg\n"},
		{name: "ssh command", remote: "hostile",
			config: "[remote \"hostile\"]\n\turl = ssh://127.0.0.1:9/x.git\n[core]\n\tsshCommand = PROG ssh-command\n"},
		{name: "git proxy", remote: "hostile",
			config: "[remote \"hostile\"]\n\turl = git://127.0.0.1:9/x.git\n[core]\n\tgitProxy = PROG git-proxy\n"},
		{name: "ext transport", remote: "hostile",
			config: "[remote \"hostile\"]\n\turl = ext::PROG ext\n[protocol \"ext\"]\n\tallow = always\n[protocol]\n\tallow = always\n"},
		{name: "credential helper and askpass", remote: "hostile",
			config: "[remote \"hostile\"]\n\turl = URL/x.git\n[credential]\n\thelper = PROG credential-helper\n" +
				"[credential \"URL\"]\n\thelper = PROG credential-url-helper\n[core]\n\taskPass = PROG askpass\n"},
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
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var errs []error
			_, err := worker.Push(ctx, c.remote, "agentteam/alice", nil)
			errs = append(errs, err)
			_, err = lead.Fetch(ctx, c.remote, "agentteam/alice", nil)
			errs = append(errs, err)
			errs = append(errs, lead.FetchCommit(ctx, c.remote, commit, nil))
			errs = append(errs, worker.PushCommit(ctx, c.remote, commit, "refs/agentteam/base/x", nil))
			errs = append(errs, worker.DeleteRemoteRef(ctx, c.remote, "refs/agentteam/base/x", "", nil))
			for i, err := range errs {
				if c.works && err != nil {
					t.Errorf("call %d: %v", i, err)
				}
			}
			noMarks(t, marks)
		})
	}
}
