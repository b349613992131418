package cmd

import (
	"errors"
	"testing"

	"github.com/agentteam/agentteam/internal/exit"
)

func TestTrustFlags(t *testing.T) {
	for _, tc := range []struct {
		args         []string
		revoke, list bool
	}{
		{[]string{"trust"}, false, false},
		{[]string{"trust", "--revoke"}, true, false},
		{[]string{"trust", "--list"}, false, true},
	} {
		c, err := executeHooked(t, nil, "", tc.args...)
		if err != nil || c.calls != 1 {
			t.Fatalf("%v: %v, %d calls", tc.args, err, c.calls)
		}
		if o := c.opts.(*TrustOptions); o.Revoke != tc.revoke || o.List != tc.list {
			t.Errorf("%v: revoke %v, list %v", tc.args, o.Revoke, o.List)
		}
	}
	for _, args := range [][]string{{"trust", "--revoke", "--list"}, {"trust", "here"}} {
		c, err := executeHooked(t, nil, "", args...)
		var ee *exit.Error
		if !errors.As(err, &ee) || ee.Code != exit.Usage || c.calls != 0 {
			t.Errorf("%v: %v, %d calls; want bad usage and no run", args, err, c.calls)
		}
	}
}
