package inbox

import (
	"strings"
	"testing"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		wantErr string // "" means valid
	}{
		{"simple", "alice", ""},
		{"mixed", "Bob_2-x", ""},
		{"digit first", "7up", ""},
		{"underscore first", "_x", ""},
		{"32 chars", strings.Repeat("a", 32), ""},
		{"lead is a valid name", "lead", ""},
		{"user is a valid name", "user", ""},
		{"empty", "", "empty"},
		{"33 chars", strings.Repeat("a", 33), "longer than 32"},
		{"leading dash", "-x", "must not start with '-'"},
		{"dot dot slash", "../x", "may only contain"},
		{"dot", ".", "may only contain"},
		{"slash", "a/b", "may only contain"},
		{"backslash", `a\b`, "may only contain"},
		{"space", "a b", "may only contain"},
		{"unicode", "zoë", "may only contain"},
		{"NUL", "a\x00", "may only contain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErr(t, ValidateName(tc.in), tc.wantErr)
		})
	}
}

func TestValidateTeammateName(t *testing.T) {
	tests := []struct {
		in, wantErr string
	}{
		{"alice", ""},
		{"lead", "reserved"},
		{"user", "reserved"},
		{"Lead", ""}, // names are case-sensitive, like the inbox files
		{"../lead", "may only contain"},
		{"", "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			checkErr(t, ValidateTeammateName(tc.in), tc.wantErr)
		})
	}
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("no error, want one containing %q", want)
	case want != "" && !strings.Contains(err.Error(), want):
		t.Fatalf("error %q does not contain %q", err, want)
	}
}
