package natsserver_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/store/natsconn"
	"github.com/agentteam/agentteam/internal/store/natsserver"
)

func TestUsersFile(t *testing.T) {
	write := func(t *testing.T, content string, mode os.FileMode) string {
		t.Helper()
		p := filepath.Join(t.TempDir(), "users")
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const pub = "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4"
	got, err := natsserver.ReadUsersFile(write(t, "# team user password\n\nalpha alice s3cret-one\n  beta "+pub+"  \nalpha carol $2a$11$abcdefghijklmnopqrstuv\n"+
		"alpha "+pub+" role=worker\nalpha dave s3cret-one role=person\nalpha erin s3cret-one role=lead\n", 0o600))
	if err != nil {
		t.Fatal(err)
	}
	want := []natsserver.TeamUser{
		{Team: "alpha", User: "alice", Password: "s3cret-one"},
		{Team: "beta", NKey: pub},
		{Team: "alpha", User: "carol", Password: "$2a$11$abcdefghijklmnopqrstuv"},
		{Team: "alpha", NKey: pub, Role: natsconn.RoleWorker},
		{Team: "alpha", User: "dave", Password: "s3cret-one", Role: natsconn.RolePerson},
		{Team: "alpha", User: "erin", Password: "s3cret-one", Role: natsconn.RoleLead},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}

	for _, tc := range []struct {
		name, content string
		mode          os.FileMode
		says          string
	}{
		{"others may read it", "alpha alice s3cret-two\n", 0o644, "chmod 600"},
		{"a password with a space", "alpha alice s3cret two\n", 0o600, "line 1: want TEAM USER PASSWORD or TEAM NKEY"},
		{"a lone word", "# c\ns3cret-two\n", 0o600, "line 2: want"},
		{"a team that is no token", "alpha.> alice s3cret-two\n", 0o600, "only letters"},
		{"a user that is no token", "alpha al*ce s3cret-two\n", 0o600, "only letters"},
		{"nobody", "# nobody yet\n", 0o600, "lists no user"},
		{"a role that is none", "alpha alice s3cret-two role=admin\n", 0o600, "line 1: role= is lead, worker or person"},
		{"an empty role", "alpha alice s3cret-two role=\n", 0o600, "line 1: role= is lead, worker or person"},
		{"a role alone", "alpha role=worker\n", 0o600, "line 1: want TEAM USER PASSWORD or TEAM NKEY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := natsserver.ReadUsersFile(write(t, tc.content, tc.mode))
			if err == nil || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("err = %v, want it to say %q", err, tc.says)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("the error shows a password: %v", err)
			}
		})
	}
	if _, err := natsserver.ReadUsersFile(t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
}
