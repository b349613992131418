package linechat

import "testing"

func TestReasonChoosesTheLineChat(t *testing.T) {
	for _, c := range []struct {
		name string
		t    Terminal
		want string
	}{
		{"a terminal", Terminal{Term: "xterm-256color", InTTY: true, OutTTY: true}, ""},
		{"tmux", Terminal{Term: "tmux-256color", InTTY: true, OutTTY: true}, ""},
		{"dumb", Terminal{Term: "dumb", InTTY: true, OutTTY: true}, "TERM is dumb"},
		{"no TERM", Terminal{InTTY: true, OutTTY: true}, "TERM is not set"},
		{"stdin a pipe", Terminal{Term: "xterm", OutTTY: true}, "standard input is not a terminal"},
		{"stdout a pipe", Terminal{Term: "xterm", InTTY: true}, "standard output is not a terminal"},
		{"both pipes", Terminal{Term: "xterm"}, "standard input and output are not a terminal"},
		{"--plain", Terminal{Term: "xterm", InTTY: true, OutTTY: true, Plain: true}, "plain output was asked for"},
		{"--plain wins over dumb", Terminal{Term: "dumb", Plain: true}, "plain output was asked for"},
	} {
		if got := c.t.Reason(); got != c.want {
			t.Errorf("%s: Reason() = %q, want %q", c.name, got, c.want)
		}
	}
}
