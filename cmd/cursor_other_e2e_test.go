//go:build !linux

package cmd

import (
	"os"
	"testing"
)

// readPositionPlace is how a sentence names where name's read position is.
func readPositionPlace(name string) string { return name + ".cursor" }

// spoilReadPosition puts garbage where name's read position is kept: off
// Linux, the file NAME.cursor.
func spoilReadPosition(t *testing.T, ws, name string) {
	t.Helper()
	if err := os.WriteFile(state(ws, "inbox", name+".cursor"), []byte("this is not a read position\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}
