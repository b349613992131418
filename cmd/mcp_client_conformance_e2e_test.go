package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// conformanceClient is the client command the conformance suite runs for
// each scenario, with the scenario's server URL as its argument: agentteam
// run with that server as [mcp.servers.conf], in a HOME and a workspace of
// the scenario's own (the suite runs scenarios in parallel).
const conformanceClient = `#!/bin/sh
set -e
dir="$CONFORMANCE_ROOT/$(printf %s "$MCP_CONFORMANCE_SCENARIO" | tr / _)"
mkdir -p "$dir/home/.config/agentteam" "$dir/ws"
printf '[mcp.servers.conf]\nurl = "%s"\n' "$1" > "$dir/home/.config/agentteam/config.toml"
cd "$dir/ws"
HOME="$dir/home" XDG_CONFIG_HOME= exec "$AGENTTEAM_BIN" run --sandbox off "call the conformance server's tools"
`

// conformanceLead calls every tool the scenario's server offers, once,
// then answers.
func conformanceLead(c fakellm.Call) fakellm.Reply {
	msgs := c.Req.Messages
	if msgs[len(msgs)-1].Role == "tool" {
		return fakellm.Reply{Content: "called the conformance server's tools"}
	}
	var calls []fakellm.ToolCall
	for _, tl := range c.Req.Tools {
		if tl.Function == nil || !strings.HasPrefix(tl.Function.Name, "mcp__conf__") {
			continue
		}
		args := `{}`
		if tl.Function.Name == "mcp__conf__add_numbers" {
			args = `{"a":2,"b":3}`
		}
		calls = append(calls, call(tl.Function.Name, args))
	}
	if len(calls) == 0 {
		return fakellm.Reply{Content: "the server offers no tools"}
	}
	return fakellm.Reply{ToolCalls: calls}
}

// The official conformance suite in client mode (--suite core) passes
// against agentteam's MCP client, driven through the binary by the fake
// model, but for the scenarios listed, with why, in
// testdata/mcp-conformance-client-expected.yml (docs/mcp.md).
func TestTheMCPClientPassesTheConformanceSuite(t *testing.T) {
	bin := mcpServerBin(t, "conformance")
	srv := fakellm.New(conformanceLead, fakellm.WithAPIKey("test-key"))
	defer srv.Close()
	dir := t.TempDir()
	client := filepath.Join(dir, "client.sh")
	if err := os.WriteFile(client, []byte(conformanceClient), 0o755); err != nil {
		t.Fatal(err)
	}
	expected, err := filepath.Abs(filepath.Join("testdata", "mcp-conformance-client-expected.yml"))
	if err != nil {
		t.Fatal(err)
	}
	env := append(fakeEnv(srv), "NODE_OPTIONS="+nodeOptions(t), "AGENTTEAM_BIN="+binary(t), "CONFORMANCE_ROOT="+filepath.Join(dir, "runs"))
	r := runCommand(t, bin, dir, env, "", nil, "client", "--command", client, "--suite", "core", "--expected-failures", expected)
	if r.code != 0 {
		t.Fatalf("conformance client: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	noViolations(t, srv)
}
