package cmd

import (
	"bytes"
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
)

// executeServe parses args with serve's run function replaced by a hook.
func executeServe(t *testing.T, env map[string]string, args ...string) (*ServeOptions, error) {
	t.Helper()
	var got *ServeOptions
	streams := IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	root := newRootCmd(streams, func(k string) string { return env[k] }, rootOpts{
		serve: func(o *ServeOptions) error { got = o; return nil },
	})
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return got, err
}

func TestServeFillsItsOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want ServeOptions
	}{
		{name: "defaults", args: []string{"serve"},
			want: ServeOptions{Listen: "127.0.0.1:4222"}},
		{name: "every flag",
			args: []string{"serve", "--listen", "0.0.0.0:4333", "--data", "/srv/nats", "--cluster", "10.0.0.1:6222",
				"--routes", "nats://10.0.0.2:6222,nats://10.0.0.3:6222", "--cluster-name", "c1", "--server-name", "a",
				"--users", "/etc/agentteam/users", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-ca", "ca.pem",
				"--team", "alpha,beta", "--team", "gamma", "--insecure"},
			want: ServeOptions{Listen: "0.0.0.0:4333", Data: "/srv/nats", Cluster: "10.0.0.1:6222",
				Routes: []string{"nats://10.0.0.2:6222", "nats://10.0.0.3:6222"}, ClusterName: "c1", ServerName: "a",
				Users: "/etc/agentteam/users", TLSCert: "c.pem", TLSKey: "k.pem", TLSCA: "ca.pem",
				Teams: []string{"alpha", "beta", "gamma"}, Insecure: true}},
		{name: "routes given one by one", args: []string{"serve", "--routes", "nats://a:1", "--routes", "nats://b:2"},
			want: ServeOptions{Listen: "127.0.0.1:4222", Routes: []string{"nats://a:1", "nats://b:2"}}},
		{name: "the users file from the environment", env: map[string]string{"AGENTTEAM_NATS_USERS": "/env/users"},
			args: []string{"serve"},
			want: ServeOptions{Listen: "127.0.0.1:4222", Users: "/env/users"}},
		{name: "the flag wins over the environment", env: map[string]string{"AGENTTEAM_NATS_USERS": "/env/users"},
			args: []string{"serve", "--users", "/flag/users"},
			want: ServeOptions{Listen: "127.0.0.1:4222", Users: "/flag/users"}},
		{name: "the workspace is a global flag", args: []string{"serve", "--workspace", "/ws"},
			want: ServeOptions{Listen: "127.0.0.1:4222"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := executeServe(t, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("serve's run function was not called")
			}
			v := *got
			v.GlobalOptions, v.IO = nil, IOStreams{}
			if !reflect.DeepEqual(v, tc.want) {
				t.Errorf("got  %+v\nwant %+v", v, tc.want)
			}
			if tc.name == "the workspace is a global flag" && got.Workspace != "/ws" {
				t.Errorf("workspace = %q", got.Workspace)
			}
		})
	}
}

func TestServeBadUsageExitsTwo(t *testing.T) {
	for _, args := range [][]string{{"serve", "now"}, {"serve", "--listen"}, {"serve", "--no-such-flag"}} {
		got, err := executeServe(t, nil, args...)
		if exit.Code(err) != exit.Usage || got != nil {
			t.Errorf("%q: exit %d (%v), ran %v", args, exit.Code(err), err, got != nil)
		}
	}
}
