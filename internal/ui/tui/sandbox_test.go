package tui

import (
	"strings"
	"testing"
)

// The status line says how commands are confined, the reason included
// when the sandbox is off.
func TestSandboxInTheStatusLine(t *testing.T) {
	for _, state := range []string{"sandbox: on", "sandbox: off (the kernel refuses new user namespaces)"} {
		hs := newHarness(t, 160, 30, Options{HasModel: true, ModelName: "gpt-x", Sandbox: state})
		lines := strings.Split(hs.view(), "\n")
		if last := lines[len(lines)-1]; !strings.Contains(last, "gpt-x") || !strings.Contains(last, state) {
			t.Fatalf("status line %q does not say %q", last, state)
		}
	}
}
