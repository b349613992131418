package permission

import "testing"

// The ways around a deny rule that reads text: each is denied, or asked
// about when the parser cannot see the command.
func TestDenyRulesSeeTheCommandsALineRuns(t *testing.T) {
	deny := Policy{Mode: ModeYolo, Deny: entries("bash(rm *)")}
	for _, tc := range []struct {
		cmd  string
		want Decision
	}{
		{`rm -rf x`, Deny},
		{`\rm -rf x`, Deny},
		{`r''m -rf x`, Deny},
		{`"rm" -rf x`, Deny},
		{`'r'"m" -rf x`, Deny},
		{`/bin/rm -rf x`, Deny},
		{`./rm -rf x`, Deny},
		{`command rm -rf x`, Deny},
		{`command -p rm -rf x`, Deny},
		{`env rm -rf x`, Deny},
		{`env -i FOO=1 -u BAR rm -rf x`, Deny},
		{`env -- rm -rf x`, Deny},
		{`exec rm -rf x`, Deny},
		{`nice -n 5 rm -rf x`, Deny},
		{`nohup rm -rf x`, Deny},
		{`time rm -rf x`, Deny},
		{`timeout -s KILL 5 rm -rf x`, Deny},
		{`sudo -u root rm -rf x`, Deny},
		{`sudo nice /usr/bin/rm x`, Deny},
		{`busybox rm x`, Deny},
		{`FOO=1 rm -rf x`, Deny},
		{`ls | xargs rm -f`, Deny},
		{`ls | xargs -n 1 rm`, Deny},
		{`ls | xargs --max-args 1 rm`, Deny},
		{`sudo --user root rm x`, Deny},
		{"rm -rf src '\n'", Deny},
		{"rm -rf src \\\n x", Deny},
		{`ls && rm -rf x`, Deny},
		{`ls; rm -rf x`, Deny},
		{`ls || (rm -rf x)`, Deny},
		{`{ rm -rf x; }`, Deny},
		{`echo $(rm -rf x)`, Deny},
		{"echo `rm -rf x`", Deny},
		{`echo "$(rm -rf x)"`, Deny},
		{`cat <(rm -rf x)`, Deny},
		{`f() { rm -rf x; }; f`, Deny},
		{`if true; then rm -rf x; fi`, Deny},
		{`for f in a b; do rm "$f"; done`, Deny},
		{"cat <<EOF\n$(rm -rf x)\nEOF", Deny},
		{`sh -c 'rm -rf x'`, Deny},
		{`bash -ec "ls; rm -rf x"`, Deny},
		{`bash -c "sh -c 'rm -rf x'"`, Deny},
		{`find . -exec rm {} \;`, Deny},
		{`find . -name '*.go' -execdir /bin/rm -f {} +`, Deny},
		{`eval "rm -rf x"`, Deny},
		// What the parser cannot pin down asks.
		{`$X -rf x`, Ask},
		{`${X} -rf x`, Ask},
		{`$(echo rm) -rf x`, Ask},
		{"`echo rm` -rf x", Ask},
		{`/bin/r? -rf x`, Ask},
		{`{rm,-rf,x}`, Ask},
		{`$'\x72m' -rf x`, Ask},
		{`eval "$X"`, Ask},
		{`eval ls`, Ask},
		{`source ./script.sh`, Ask},
		{`. ./script.sh`, Ask},
		{`sh -c "$X"`, Ask},
		{`bash -c`, Ask},
		{`echo rm -rf x | sh`, Ask},
		{`bash < script.sh`, Ask},
		{`find . -delete`, Ask},
		{`find . -name x -fprint out`, Ask},
		{`ls | xargs $X`, Ask},
		{`env -S 'ls -l'`, Ask},
		{`trap 'ls' EXIT`, Ask},
		{`echo 'unclosed`, Ask},
		// Not rm at all.
		{`echo rm -rf x`, Allow},
		{`ls -l`, Allow},
		{`grep -r 'rm -rf' .`, Allow},
		{`git rm --cached x`, Allow},
		{`command -v rm`, Allow},
		{`[ -f x ] && ls`, Allow},
		{`[ -f x ] && rm x`, Deny},
		{`/bin/[r]m x`, Ask},
	} {
		if v := deny.Decide(Call{Tool: "bash", Kind: Exec, Subject: tc.cmd}); v.Decision != tc.want {
			t.Errorf("deny bash(rm *): %q is %s (%s), want %s", tc.cmd, v.Decision, v.Why, tc.want)
		}
	}
}

func TestDenyRuleWrittenWithAPath(t *testing.T) {
	p := Policy{Mode: ModeYolo, Deny: entries("bash(/bin/rm *)")}
	for _, cmd := range []string{`/bin/rm x`, `rm x`, `ls; rm x`, `"/bin/rm" x`} {
		if v := p.Decide(Call{Tool: "bash", Kind: Exec, Subject: cmd}); v.Decision != Deny {
			t.Errorf("deny bash(/bin/rm *): %q is %s (%s)", cmd, v.Decision, v.Why)
		}
	}
}

func TestDenyRuleOfAWrapperStillHolds(t *testing.T) {
	p := Policy{Mode: ModeYolo, Deny: entries("bash(sudo *)", "bash(git push *)")}
	for _, cmd := range []string{`sudo ls`, `ls && sudo -u x ls`, `git "push" origin`, `git push`, `env git push`} {
		if v := p.Decide(Call{Tool: "bash", Kind: Exec, Subject: cmd}); v.Decision != Deny {
			t.Errorf("%q is %s (%s)", cmd, v.Decision, v.Why)
		}
	}
}

func TestAskRulesSeeTheCommandsToo(t *testing.T) {
	p := Policy{Mode: ModeYolo, AskRules: entries("bash(git push *)")}
	for _, cmd := range []string{`command git push`, `(cd x && git push -f)`, `eval "$X"`} {
		if v := p.Decide(Call{Tool: "bash", Kind: Exec, Subject: cmd}); v.Decision != Ask {
			t.Errorf("%q is %s (%s)", cmd, v.Decision, v.Why)
		}
	}
}

// Allow rules allow a line only when they allow each of its simple commands
// and the parser pins every one down.
func TestAllowRulesAllowOnlyWhatTheyName(t *testing.T) {
	allow := Policy{Mode: ModeAsk, Allow: entries("bash(go test *)", "bash(go vet *)", "bash(git status)", "bash(git diff *)", "bash(ls *)", "bash(grep *)")}
	for _, tc := range []struct {
		cmd  string
		want Decision
	}{
		{`go test ./...`, Allow},
		{`go test`, Allow},
		{`go test -run 'TestX|TestY' ./cmd/`, Allow},
		{`go test ./... 2>&1`, Allow},
		{`go test ./... 2>/dev/null`, Allow},
		{`go vet ./... && go test ./...`, Allow},
		{`git status && git diff`, Allow},
		{`git status; git diff --stat`, Allow},
		{`ls -l | grep x`, Allow},
		{`time go test ./...`, Allow},
		{`nice go test ./...`, Allow},
		{`timeout 60 go test ./...`, Allow},
		{`go test "; rm -rf ~"`, Allow}, // one quoted argument to go test
		{`go testx`, Ask},
		{`go test ./... && rm -rf ~`, Ask},
		{`go test $(rm -rf ~)`, Ask},
		{"go test `rm -rf ~`", Ask},
		{`go test $X`, Ask},
		{`go test > ~/.bashrc`, Ask},
		{`go test &> out`, Ask},
		{`{ go test; } > out`, Ask},
		{`go test <(rm x)`, Ask},
		{`./go test ./...`, Ask},
		{`/tmp/go test ./...`, Ask},
		{`PATH=/tmp:$PATH go test ./...`, Ask},
		{`GOFLAGS=-toolexec=x go test ./...`, Ask},
		{`env GOFLAGS=-toolexec=x go test ./...`, Ask},
		{`sudo go test ./...`, Ask},
		{`ls | xargs go test`, Ask},
		{`eval go test`, Ask},
		{`sh -c 'go test ./...'`, Allow},
		{`sh -c 'go test ./...; rm -rf x'`, Ask},
		{`bash script.sh`, Ask},
		{`find . -exec go test {} \;`, Ask},
		{`export X=1 && go test`, Ask},
		{`X=1; go test`, Ask},
		{`go test 'unclosed`, Ask},
		{`$GO test`, Ask},
	} {
		if v := allow.Decide(Call{Tool: "bash", Kind: Exec, Subject: tc.cmd}); v.Decision != tc.want {
			t.Errorf("%q is %s (%s), want %s", tc.cmd, v.Decision, v.Why, tc.want)
		}
	}
}

// "allow always" records the command approved, not a pattern its glob
// characters would make.
func TestAlwaysRecordsExactlyTheApprovedCommand(t *testing.T) {
	approved := Call{Tool: "bash", Kind: Exec, Subject: "rm -f *.log"}
	rule := Suggest(approved)
	if rule.String() != `bash(rm -f \*.log)` {
		t.Fatalf("Suggest = %s, want bash(rm -f \\*.log)", rule)
	}
	back, err := ParseRule(rule.String())
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: ModeAsk, Allow: []Entry{{Rule: back, From: "allowed always"}}}
	if v := p.Decide(approved); v.Decision != Allow {
		t.Fatalf("the rule does not allow the approved command: %s", v.Why)
	}
	for _, cmd := range []string{"rm -f -r src .git x.log", "rm -f a.log", "rm -f *.log; rm -rf src", "rm -f *.log*", `rm -f \*.log`} {
		if v := p.Decide(Call{Tool: "bash", Kind: Exec, Subject: cmd}); v.Decision != Ask {
			t.Errorf("%s allows %q: %s", rule, cmd, v.Why)
		}
	}
	write := Call{Tool: "write_file", Kind: Write, Subject: `docs/a*?\b.md`, InRoot: true}
	p = Policy{Mode: ModeAsk, Allow: []Entry{{Rule: Suggest(write)}}}
	if v := p.Decide(write); v.Decision != Allow {
		t.Errorf("%s does not allow its path: %s", Suggest(write), v.Why)
	}
	for _, path := range []string{`docs/axy\b.md`, "docs/a.md", `docs/a*?xb.md`} {
		if v := p.Decide(Call{Tool: "write_file", Kind: Write, Subject: path, InRoot: true}); v.Decision != Ask {
			t.Errorf("%s allows %q", Suggest(write), path)
		}
	}
}

func TestEscapesInPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, cmd string
		want         bool
	}{
		{`echo \*`, `echo *`, true},
		{`echo \*`, `echo x`, false},
		{`echo \\*`, `echo \anything`, true}, // an escaped backslash, then a wildcard
		{`echo \\\*`, `echo \*`, true},
		{`grep \d *`, `grep \d x`, true}, // a backslash before another character is itself
		{`a\?`, `a?`, true},
	} {
		if got := commandMatch(tc.pattern, tc.cmd); got != tc.want {
			t.Errorf("commandMatch(%q, %q) = %v, want %v", tc.pattern, tc.cmd, got, tc.want)
		}
	}
	if got := pathMatch(`a\*.md`, "ab.md"); got {
		t.Error(`pathMatch(a\*.md, ab.md): an escaped star is a star`)
	}
}
