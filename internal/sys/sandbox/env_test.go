package sandbox

import (
	"slices"
	"testing"
)

func TestEnviron(t *testing.T) {
	environ := []string{
		"PATH=/bin", "HOME=/h", "USER=u", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "SHELL=/bin/bash", "TMPDIR=/t",
		"OPENAI_API_KEY=sk-1", "MY_MODEL_KEY_VAR=sk-2", "GITHUB_TOKEN=ghp", "AWS_SECRET_ACCESS_KEY=aws",
		"DB_PASSWORD=pw", "my_password_file=x", "CLIENT_SECRET=c", "GOPATH=/go", "EDITOR=vi", "noequals",
	}
	got := Environ(environ, []string{"GOPATH", "GITHUB_TOKEN", "MY_MODEL_KEY_VAR", "DB_PASSWORD"}, []string{"MY_MODEL_KEY_VAR"})
	want := []string{"PATH=/bin", "HOME=/h", "USER=u", "LANG=C.UTF-8", "LC_ALL=C", "TERM=xterm", "SHELL=/bin/bash", "TMPDIR=/t", "GOPATH=/go"}
	if !slices.Equal(got, want) {
		t.Fatalf("Environ =\n%q\nwant\n%q", got, want)
	}
	// The key's own variable is hidden even when its name looks harmless.
	if got := Environ([]string{"LLM=sk-3", "PATH=/bin"}, []string{"LLM"}, []string{"LLM"}); !slices.Equal(got, []string{"PATH=/bin"}) {
		t.Fatalf("the key's variable passed: %q", got)
	}
}

func TestSetEnv(t *testing.T) {
	got := SetEnv([]string{"A=1", "TMPDIR=/old", "B=2"}, "TMPDIR", "/new")
	if want := []string{"A=1", "B=2", "TMPDIR=/new"}; !slices.Equal(got, want) {
		t.Fatalf("SetEnv = %q, want %q", got, want)
	}
}

func TestParse(t *testing.T) {
	for _, s := range []string{"auto", "required", "off", " OFF "} {
		if _, err := ParseMode(s); err != nil {
			t.Errorf("ParseMode(%q): %v", s, err)
		}
	}
	if _, err := ParseMode("yes"); err == nil {
		t.Error("ParseMode(yes) took it")
	}
	if on, err := ParseNetwork("off"); err != nil || on {
		t.Errorf("ParseNetwork(off) = %v, %v", on, err)
	}
	if _, err := ParseNetwork("maybe"); err == nil {
		t.Error("ParseNetwork(maybe) took it")
	}
}
