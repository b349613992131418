package permission

import "testing"

// An MCP server's tools are named in rules one by one (hyphens and all),
// or all at once as mcp__SERVER__* or mcp__SERVER, as in Claude Code; a
// server's rule reaches no other server's tools, and takes no pattern.
func TestRulesForAnMCPServersTools(t *testing.T) {
	mcpCall := func(tool string) Call { return Call{Tool: tool, Kind: Exec, Subject: `{"message":"hi"}`} }
	for _, c := range []struct {
		rule    string
		allows  []string
		refuses []string
	}{
		{"mcp__github__*", []string{"mcp__github__create_issue", "mcp__github__get-file"}, []string{"mcp__gitlab__create_issue", "mcp__githubx__a", "bash"}},
		{"mcp__github", []string{"mcp__github__create_issue"}, []string{"mcp__gitlab__create_issue", "mcp__githubx__a"}},
		{"mcp__server-everything__get-env", []string{"mcp__server-everything__get-env"}, []string{"mcp__server-everything__echo"}},
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatalf("ParseRule(%q): %v", c.rule, err)
		}
		if r.String() != c.rule {
			t.Errorf("%q reads back as %q", c.rule, r)
		}
		allow := Policy{Mode: ModeAsk, Allow: []Entry{{Rule: r}}}
		deny := Policy{Mode: ModeYolo, Deny: []Entry{{Rule: r}}}
		for _, tool := range c.allows {
			if v := allow.Decide(mcpCall(tool)); v.Decision != Allow {
				t.Errorf("allow %s: %s asks (%s)", c.rule, tool, v.Why)
			}
			if v := deny.Decide(mcpCall(tool)); v.Decision != Deny {
				t.Errorf("deny %s: %s runs (%s)", c.rule, tool, v.Why)
			}
		}
		for _, tool := range c.refuses {
			if v := allow.Decide(mcpCall(tool)); v.Decision == Allow {
				t.Errorf("allow %s allows %s", c.rule, tool)
			}
		}
	}
	for _, bad := range []string{"mcp__github__*(x)", "mcp__*", "mcp__gh__a*", "*"} {
		if r, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) = %s, want a refusal", bad, r)
		}
	}
	if r, ok := SuggestPrefix(mcpCall("mcp__github__create_issue")); !ok || r.String() != "mcp__github__create_issue" {
		t.Errorf("an MCP tool's session rule: %s, %v; want the tool whatever its arguments", r, ok)
	}
}
