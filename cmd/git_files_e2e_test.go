package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentteam/agentteam/internal/llm/fakellm"
)

// The file tools, which run outside any sandbox, write nothing of .git: a
// hook or a config the person's next git command would run.
func TestFileToolsCannotPlantGitHooksThroughTheBinary(t *testing.T) {
	ws := gitRepo(t)
	config, err := os.ReadFile(filepath.Join(ws, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	srv := fakellm.New(func(c fakellm.Call) fakellm.Reply {
		if !called(c.Req.Messages, "write_file") {
			return fakellm.Reply{ToolCalls: []fakellm.ToolCall{
				call("write_file", `{"path":".git/hooks/pre-commit","content":"#!/bin/sh\ntouch HOOK-RAN\n"}`),
				call("edit_file", `{"path":".git/config","old_text":"[core]","new_text":"[core]\n\thooksPath = /tmp"}`),
			}}
		}
		return fakellm.Reply{Content: "lead: done"}
	})
	defer srv.Close()
	r := runBin(t, ws, fakeEnv(srv), "", "run", "--sandbox", "off", "plant a hook")
	mustSucceed(t, r, "run")
	res := toolResults(t, ws, "lead")
	if len(res) != 2 || !strings.Contains(res[0], "is git's own") || !strings.Contains(res[1], "is git's own") {
		t.Fatalf("the file tools were not refused: %q", res)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git", "hooks", "pre-commit")); err == nil {
		t.Fatal("write_file made a pre-commit hook")
	}
	if b, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(b) != string(config) {
		t.Fatalf("edit_file changed .git/config: %q", b)
	}
}
