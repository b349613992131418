package tui

import (
	"fmt"
	"strings"
	"testing"
)

// On a team across hosts the team panel says which worker runs each
// teammate another process runs, and nothing for this process's own, at
// 120×40 and 80×24; a hostile host name cannot write escapes to the screen.
func TestTeamPanelShowsTheWorkerOfATeammateRunElsewhere(t *testing.T) {
	for _, size := range []struct{ w, h int }{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size.w, size.h), func(t *testing.T) {
			hs := newHarness(t, size.w, size.h, Options{HasModel: true, MaxWorkers: 5, ModelName: "m", WorkerID: "leadhost-100"})
			snap := members("alice:working", "bob:idle", "carol:idle", "dave:idle")
			ms := snap.Config.Teammates
			ms[0].Worker, ms[0].Host = "gpu1", "box-b"            // a named worker on another host
			ms[1].Worker, ms[1].Host = "box-c-4242", "box-c"      // the default id names its host
			ms[2].Worker, ms[2].Host = "leadhost-100", "leadhost" // this process: no place shown
			ms[3].Worker, ms[3].Host = "w9", "evil\x1b[2J"        // a registry written by anyone
			hs.send(snap)
			v := hs.view()
			checkScreen(t, v, size.w, size.h)
			want := map[string]string{"alice": " on gpu1@box-b", "bob": " on box-c-4242 ", "carol": "", "dave": " on w9@evil?[2J"}
			for name, place := range want {
				var row string
				for _, l := range strings.Split(v, "\n") {
					if strings.Contains(l, name+" tester") {
						row = l
					}
				}
				switch {
				case row == "":
					t.Errorf("no row for %s:\n%s", name, v)
				case place == "" && strings.Contains(row, " on "):
					t.Errorf("%s, run by this process, shows a place: %q", name, row)
				case place != "" && !strings.Contains(row, place):
					t.Errorf("%s's row %q does not say %q", name, row, place)
				}
			}
			if strings.Contains(hs.m.View().Content, "\x1b[2J") {
				t.Error("the host name's escape reached the screen")
			}
		})
	}
}
