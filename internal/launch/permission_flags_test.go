package launch

import (
	"testing"
	"time"

	"github.com/agentteam/agentteam/internal/exit"
	"github.com/agentteam/agentteam/internal/sys/config"
	"github.com/agentteam/agentteam/internal/sys/permission"
	"github.com/agentteam/agentteam/team/permgate"
)

func TestPermissionFlagsOverTheFilesOverTheCommandsDefaults(t *testing.T) {
	file := &config.Config{Permissions: config.Permissions{
		Mode:    config.Value[permission.Mode]{V: permission.ModeAutoEdit, From: "project"},
		Timeout: config.Value[time.Duration]{V: time.Minute, From: "user"},
		Deny:    []permission.Entry{{Rule: permission.MustParseRule("bash(rm *)"), From: "user"}},
	}}
	for _, tc := range []struct {
		name        string
		f           TeamFlags
		cfg         *config.Config
		chat        bool
		mode        permission.Mode
		delegate    string
		timeout     time.Duration
		allow, deny int
	}{
		{name: "chat asks the person", chat: true, mode: permission.ModeAsk, delegate: permgate.DelegateUser},
		{name: "run has nobody to ask and runs what no rule refuses", mode: permission.ModeYolo, delegate: permgate.DelegateNone},
		{name: "the files' mode and rules", cfg: file, mode: permission.ModeAutoEdit, delegate: permgate.DelegateNone, timeout: time.Minute, deny: 1},
		{name: "flags win and add rules", cfg: file, f: TeamFlags{PermissionMode: "ask", PermissionDelegate: "lead", PermissionTimeout: time.Second,
			Allow: []string{"bash(go test *)"}, Deny: []string{"write_file(.env)"}},
			mode: permission.ModeAsk, delegate: permgate.DelegateLead, timeout: time.Second, allow: 1, deny: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := tc.f.Permissions(&GlobalOptions{Config: tc.cfg}, tc.chat)
			if err != nil {
				t.Fatal(err)
			}
			if o.Policy.Mode != tc.mode || o.Delegate != tc.delegate || o.Timeout != tc.timeout || o.Person != tc.chat ||
				len(o.Policy.Allow) != tc.allow || len(o.Policy.Deny) != tc.deny {
				t.Fatalf("got %+v", o)
			}
		})
	}
	for _, f := range []TeamFlags{{PermissionMode: "careful"}, {PermissionDelegate: "bob"}, {Allow: []string{"bash("}}, {Deny: []string{"(x)"}}, {PermissionTimeout: -time.Second}} {
		if _, err := f.Permissions(&GlobalOptions{}, false); err == nil || exit.Code(err) != exit.Usage {
			t.Errorf("%+v: %v, want bad usage", f, err)
		}
	}
}
