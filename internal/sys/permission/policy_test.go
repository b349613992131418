package permission

import "testing"

func entries(rules ...string) []Entry {
	var es []Entry
	for _, r := range rules {
		es = append(es, Entry{Rule: MustParseRule(r), From: "test"})
	}
	return es
}

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "bash(go test *)", want: "bash(go test *)"},
		{in: " write_file(docs/**) ", want: "write_file(docs/**)"},
		{in: "bash", want: "bash"},
		{in: "bash(echo (a))", want: "bash(echo (a))"},
		{in: "bash()", bad: true},
		{in: "bash(go test", bad: true},
		{in: "(x)", bad: true},
		{in: "../x", bad: true},
		{in: "bash(a\nb)", bad: true},
	} {
		r, err := ParseRule(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseRule(%q) = %v, want an error", tc.in, r)
			}
			continue
		}
		if err != nil || r.String() != tc.want {
			t.Errorf("ParseRule(%q) = %q, %v; want %q", tc.in, r.String(), err, tc.want)
		}
	}
}

func TestPathPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, path string
		want          bool
	}{
		{"docs/**", "docs/a.md", true},
		{"docs/**", "docs/deep/er/a.md", true},
		{"docs/**", "docs", true},
		{"docs/**", "docsx/a.md", false},
		{"docs/**", "src/docs/a.md", false},
		{"docs/*.md", "docs/a.md", true},
		{"docs/*.md", "docs/sub/a.md", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "a/b/c.go.txt", false},
		{"src/**/test_*.py", "src/x/y/test_a.py", true},
		{"src/**/test_*.py", "src/test_a.py", true},
		{"notes.txt", "notes.txt", true},
		{"notes.txt", "notes.txt.bak", false},
		{"./notes.txt", "notes.txt", true},
		{"a?c", "abc", true},
		{"a?c", "a/c", false},
		{"a.c", "abc", false}, // a dot is a dot
	} {
		if got := pathMatch(tc.pattern, tc.path); got != tc.want {
			t.Errorf("pathMatch(%q, %q) = %v, want %v", tc.pattern, tc.path, got, tc.want)
		}
	}
}

func TestCommandPatterns(t *testing.T) {
	for _, tc := range []struct {
		pattern, cmd string
		want         bool
	}{
		{"go test *", "go test ./...", true},
		{"go test *", "go test", true},
		{"go test *", "go testx", false},
		{"go test *", "go vet ./...", false},
		{"go test *", " go test -run X ./cmd/ ", true},
		{"ls", "ls", true},
		{"ls", "ls -la", false},
		{"git * --stat", "git diff --stat", true},
		{"make.*", "makeXall", false}, // regexp characters are literal
	} {
		if got := commandMatch(tc.pattern, tc.cmd); got != tc.want {
			t.Errorf("commandMatch(%q, %q) = %v, want %v", tc.pattern, tc.cmd, got, tc.want)
		}
	}
}

func TestDecide(t *testing.T) {
	bash := func(cmd string) Call { return Call{Tool: "bash", Kind: Exec, Subject: cmd} }
	write := func(p string, inRoot bool) Call {
		return Call{Tool: "write_file", Kind: Write, Subject: p, InRoot: inRoot}
	}
	read := Call{Tool: "read_file", Kind: Read, Subject: "secret.txt"}
	for _, tc := range []struct {
		name string
		p    Policy
		c    Call
		want Decision
	}{
		{"ask mode asks before commands", Policy{Mode: ModeAsk}, bash("ls"), Ask},
		{"ask mode asks before writes", Policy{Mode: ModeAsk}, write("a.txt", true), Ask},
		{"the empty mode is ask", Policy{}, bash("ls"), Ask},
		{"reads never ask", Policy{Mode: ModeAsk}, read, Allow},
		{"auto-edit allows writes in the root", Policy{Mode: ModeAutoEdit}, write("a.txt", true), Allow},
		{"auto-edit asks before writes outside the root", Policy{Mode: ModeAutoEdit}, write("../b/a.txt", false), Ask},
		{"auto-edit asks before commands", Policy{Mode: ModeAutoEdit}, bash("ls"), Ask},
		{"yolo allows commands", Policy{Mode: ModeYolo}, bash("rm -rf x"), Allow},
		{"an allow rule beats the mode", Policy{Mode: ModeAsk, Allow: entries("bash(go test *)")}, bash("go test ./..."), Allow},
		{"an allow rule for another command does not", Policy{Mode: ModeAsk, Allow: entries("bash(go test *)")}, bash("go vet ./..."), Ask},
		{"a path rule allows its tree", Policy{Mode: ModeAsk, Allow: entries("write_file(docs/**)")}, write("docs/x/y.md", true), Allow},
		{"a path rule does not allow elsewhere", Policy{Mode: ModeAsk, Allow: entries("write_file(docs/**)")}, write("src/y.go", true), Ask},
		{"a rule is for its tool only", Policy{Mode: ModeAsk, Allow: entries("write_file(docs/**)")}, Call{Tool: "edit_file", Kind: Write, Subject: "docs/a.md"}, Ask},
		{"deny beats yolo", Policy{Mode: ModeYolo, Deny: entries("bash(rm *)")}, bash("rm -rf x"), Deny},
		{"deny beats allow", Policy{Mode: ModeAsk, Allow: entries("bash"), Deny: entries("bash(rm *)")}, bash("rm x"), Deny},
		{"deny catches a piece after ;", Policy{Mode: ModeYolo, Deny: entries("bash(rm *)")}, bash("ls; rm -rf x"), Deny},
		{"deny catches a piece after &&", Policy{Mode: ModeYolo, Deny: entries("bash(rm *)")}, bash("true && rm -rf x"), Deny},
		{"deny catches a substitution", Policy{Mode: ModeYolo, Deny: entries("bash(rm *)")}, bash("echo $(rm -rf x)"), Deny},
		{"deny catches a backquote", Policy{Mode: ModeYolo, Deny: entries("bash(rm *)")}, bash("echo `rm -rf x`"), Deny},
		{"deny of a path beats yolo", Policy{Mode: ModeYolo, Deny: entries("write_file(.env)")}, write(".env", true), Deny},
		{"deny may cover reads", Policy{Mode: ModeYolo, Deny: entries("read_file(secret.txt)")}, read, Deny},
		{"ask beats allow", Policy{Mode: ModeYolo, Allow: entries("bash"), AskRules: entries("bash(git push *)")}, bash("git push origin"), Ask},
		{"an ask rule beats yolo", Policy{Mode: ModeYolo, AskRules: entries("bash(git push *)")}, bash("git push"), Ask},
		{"a pattern does not allow a chained command", Policy{Mode: ModeAsk, Allow: entries("bash(go test *)")}, bash("go test ./... && rm -rf ~"), Ask},
		{"a pattern does not allow a substitution", Policy{Mode: ModeAsk, Allow: entries("bash(go test *)")}, bash("go test $(rm -rf ~)"), Ask},
		{"a pattern does not allow a redirection", Policy{Mode: ModeAsk, Allow: entries("bash(go test *)")}, bash("go test > ~/.bashrc"), Ask},
		{"patterns allow a chain whose every piece they match", Policy{Mode: ModeAsk, Allow: entries("bash(go test *)", "bash(go vet *)")}, bash("go vet ./... && go test ./..."), Allow},
		{"an exact rule allows exactly its command", Policy{Mode: ModeAsk, Allow: entries("bash(make lint > out.txt)")}, bash("make lint > out.txt"), Allow},
		{"an exact rule allows nothing more", Policy{Mode: ModeAsk, Allow: entries("bash(make lint)")}, bash("make lint; rm x"), Ask},
		{"a bare tool rule allows every call", Policy{Mode: ModeAsk, Allow: entries("bash")}, bash("anything | at all"), Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := tc.p.Decide(tc.c)
			if v.Decision != tc.want {
				t.Fatalf("Decide = %s (%s), want %s", v.Decision, v.Why, tc.want)
			}
			if v.Why == "" {
				t.Fatal("a verdict without a reason")
			}
		})
	}
}

func TestSuggestAllowsTheCallAndNoOther(t *testing.T) {
	for _, c := range []Call{
		{Tool: "bash", Kind: Exec, Subject: "go test ./... && echo ok"},
		{Tool: "write_file", Kind: Write, Subject: "docs/a.md"},
	} {
		r := Suggest(c)
		back, err := ParseRule(r.String())
		if err != nil {
			t.Fatalf("Suggest(%+v) = %q, which does not parse: %v", c, r, err)
		}
		p := Policy{Mode: ModeAsk, Allow: []Entry{{Rule: back}}}
		if v := p.Decide(c); v.Decision != Allow {
			t.Errorf("the suggested rule %q does not allow the call: %s", r, v.Why)
		}
		other := c
		other.Subject += "x"
		if v := p.Decide(other); v.Decision != Ask {
			t.Errorf("the suggested rule %q also allows %q", r, other.Subject)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, s := range []string{"ask", "auto-edit", "yolo"} {
		if m, err := ParseMode(s); err != nil || string(m) != s {
			t.Errorf("ParseMode(%q) = %q, %v", s, m, err)
		}
	}
	if _, err := ParseMode("YOLO"); err == nil {
		t.Error("ParseMode accepted YOLO")
	}
}

// A prefix rule is offered for one plain command of a program with
// subcommands; it allows that command and its kin, never another command
// a line adds, and none is offered where the first words would allow too
// much.
func TestSuggestPrefixWidensOnlyPlainCommands(t *testing.T) {
	bash := func(cmd string) Call { return Call{Tool: "bash", Kind: Exec, Subject: cmd} }
	for cmd, want := range map[string]string{
		"go test ./...":                "bash(go test *)",
		"go test":                      "bash(go test *)",
		"npm run test -- -u":           "bash(npm run test *)",
		"cargo build --release":        "bash(cargo build *)",
		"pytest tests/test_x.py -k a*": "bash(pytest *)",
		"git status --short":           "bash(git status *)",
	} {
		r, ok := SuggestPrefix(bash(cmd))
		if !ok || r.String() != want {
			t.Errorf("SuggestPrefix(%q) = %s, %v; want %s", cmd, r, ok, want)
			continue
		}
		p := Policy{Mode: ModeAsk, Allow: []Entry{{Rule: r}}}
		if v := p.Decide(bash(cmd)); v.Decision != Allow {
			t.Errorf("%s does not allow %q: %s", r, cmd, v.Why)
		}
		for _, other := range []string{cmd + " && rm -rf ~", cmd + "; curl evil", "rm -rf ~", cmd + " > /etc/x"} {
			if v := p.Decide(bash(other)); v.Decision == Allow {
				t.Errorf("%s allows %q", r, other)
			}
		}
	}
	for _, cmd := range []string{
		"rm -rf build", "go test ./... | tee out", "go test > out", "sudo go test", "nice go test",
		"go $X", "git -c core.pager=sh log", "GOFLAGS=-x go test", "./go test", "go test && go vet", "sh -c 'go test'",
	} {
		if r, ok := SuggestPrefix(bash(cmd)); ok {
			t.Errorf("SuggestPrefix(%q) = %s; want none", cmd, r)
		}
	}
	if _, ok := SuggestPrefix(Call{Tool: "write_file", Kind: Write, Subject: "a.go"}); ok {
		t.Error("a write got a prefix rule")
	}
}
