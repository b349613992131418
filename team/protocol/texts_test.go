package protocol

import (
	"strings"
	"testing"
)

// TestShutdownRequestReasonEndsASentence: a reason given in a few words
// ("the person asked for it") ends with a full stop before "Answer with".
func TestShutdownRequestReasonEndsASentence(t *testing.T) {
	for reason, want := range map[string]string{
		"the person asked for it": "shut down: the person asked for it.\nAnswer with",
		"work is done.":           "shut down: work is done.\nAnswer with",
		"are you finished?":       "shut down: are you finished?\nAnswer with",
		"  trailing space  ":      "shut down: trailing space.\nAnswer with",
	} {
		if got := shutdownRequestText(reason, "shutdown-1"); !strings.Contains(got, want) {
			t.Errorf("reason %q: %q lacks %q", reason, got, want)
		}
	}
}
