//go:build linux

package cmd

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// A command reads nothing of the person's credentials: ssh and cloud
// keys, agentteam's own user config, a NATS creds file agentteam was given,
// what [sandbox] read_hidden adds; nor does it reach ssh-agent's socket. Nothing of them is in its result nor in
// any file of the workspace, though it reads the rest of the home.
func TestBashCannotReadCredentialsThroughTheBinary(t *testing.T) {
	needSandbox(t)
	for _, who := range sandboxUsers() {
		t.Run(who.name, func(t *testing.T) {
			u := newSandboxUser(t, who.uid)
			n := rand.Int64()
			secret := func(name string) string { return fmt.Sprintf("%s-secret-%d", name, n) }
			creds := filepath.Join(u.home, "nats", "team.creds")
			files := map[string]string{
				".ssh/id_rsa":                   secret("ssh"),
				".aws/credentials":              secret("aws"),
				".netrc":                        secret("netrc"),
				".git-credentials":              secret("gitcreds"),
				".docker/config.json":           secret("docker"),
				".config/gcloud/credentials":    secret("gcloud"),
				"vault/token":                   secret("vault"),
				"nats/team.creds":               "alice " + secret("nats"),
				".config/agentteam/config.toml": "# " + secret("agentteam") + "\n[sandbox]\nread_hidden = [\"~/vault\"]\n",
				"visible.txt":                   fmt.Sprintf("visible-%d", n),
			}
			for rel, content := range files {
				p := filepath.Join(u.home, rel)
				if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
					t.Fatal(err)
				}
				testWriteFile(t, p, content+"\n")
			}
			// ssh-agent's socket: a command that reached it would sign as the person.
			sock := filepath.Join(u.home, "agent.sock")
			ln, err := net.Listen("unix", sock)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			u.own(t)
			var paths []string
			for rel := range files {
				paths = append(paths, filepath.Join(u.home, rel))
			}
			steal := "cat " + strings.Join(paths, " ") + "; cp " + filepath.Join(u.home, ".ssh/id_rsa") + " stolen; " +
				"grep -rs secret- " + u.home + "; [ -S " + sock + " ] && echo AGENT-REACHABLE; echo END"
			srv := fakellm.New(bashLead(steal))
			defer srv.Close()
			r := u.run(t, append(fakeEnv(srv), "AGENTTEAM_NATS_CREDS="+creds, "SSH_AUTH_SOCK="+sock), "run", "--sandbox", sandboxFlag(), "read the keys")
			mustSucceed(t, r, "run")
			noViolations(t, srv)
			res := toolResults(t, u.ws, "lead")
			if len(res) != 1 || !strings.Contains(res[0], fmt.Sprintf("visible-%d", n)) || !strings.Contains(res[0], "END") {
				t.Fatalf("the command did not run as planned: %q", res)
			}
			names := []string{"ssh", "aws", "netrc", "gitcreds", "docker", "gcloud", "vault", "nats", "agentteam"}
			leaked := func(where string, data []byte) {
				for _, name := range names {
					if bytes.Contains(data, []byte(secret(name))) {
						t.Errorf("%s holds the %s secret", where, name)
					}
				}
			}
			leaked("the command's result", []byte(res[0]))
			if strings.Contains(res[0], "AGENT-REACHABLE") {
				t.Error("the command sees ssh-agent's socket")
			}
			_ = filepath.WalkDir(u.ws, func(p string, d fs.DirEntry, err error) error {
				if err == nil && d.Type().IsRegular() {
					data, _ := os.ReadFile(p)
					leaked(p, data)
				}
				return err
			})
		})
	}
}

// A path the sandbox cannot hide (here one holding the workspace) fails
// each command with one sentence instead of running it unmasked; the run
// goes on.
func TestUnmaskablePathFailsTheCommandThroughTheBinary(t *testing.T) {
	needSandbox(t)
	u := newSandboxUser(t, os.Geteuid())
	if err := os.MkdirAll(filepath.Join(u.home, ".config", "agentteam"), 0o755); err != nil {
		t.Fatal(err)
	}
	testWriteFile(t, filepath.Join(u.home, ".config", "agentteam", "config.toml"), fmt.Sprintf("[sandbox]\nread_hidden = [%q]\n", filepath.Dir(u.ws)))
	srv := fakellm.New(bashLead("echo RAN > ran.txt; echo RAN"))
	defer srv.Close()
	r := u.run(t, fakeEnv(srv), "run", "--sandbox", sandboxFlag(), "run one command")
	mustSucceed(t, r, "run")
	res := toolResults(t, u.ws, "lead")
	if len(res) != 1 || !strings.Contains(res[0], "sandbox: cannot hide "+filepath.Dir(u.ws)+": the command's directory") || strings.Contains(res[0], "RAN") {
		t.Fatalf("the command's result: %q", res)
	}
	if _, err := os.Stat(filepath.Join(u.ws, "ran.txt")); err == nil {
		t.Fatal("the command ran")
	}
}
