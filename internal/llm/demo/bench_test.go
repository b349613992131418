package demo

import (
	"testing"
)

func BenchmarkLeadTurnStream(b *testing.B) {
	req := conv(leadTools, sys("lead"), user("tell alice to message bob: the build is green"))
	for b.Loop() {
		if tr := ask(b, "lead", true, req); len(tr.calls) != 1 {
			b.Fatalf("got %+v", tr)
		}
	}
}

func BenchmarkLeadTurnJSON(b *testing.B) {
	req := conv(leadTools, sys("lead"), user("tell alice to message bob: the build is green"))
	for b.Loop() {
		if tr := ask(b, "lead", false, req); len(tr.calls) != 1 {
			b.Fatalf("got %+v", tr)
		}
	}
}
