package tools

import (
	"path/filepath"
	"strings"
	"testing"
)

// The diff a write reports in place of one it cannot show: a binary file,
// one larger than maxDiffInput, a failed write (none at all).
func TestWriteDiffWhenThereIsNoneToShow(t *testing.T) {
	env, _, _, _ := testEnv(t)
	root := env.Workspace.Root
	writeTestFile(t, filepath.Join(root, "bin.dat"), "ELF\x00\x01")
	writeTestFile(t, filepath.Join(root, "huge.txt"), strings.Repeat("x\n", maxDiffInput/2+1))

	if r := call(t, env, WriteFileName, map[string]string{"path": "bin.dat", "content": "text now\n"}); r.IsError || r.Diff != "(bin.dat: diff not shown, the file is binary)" {
		t.Errorf("over a binary file: %+v", r)
	}
	r := call(t, env, WriteFileName, map[string]string{"path": "huge.txt", "content": "small\n"})
	if r.IsError || !strings.HasPrefix(r.Diff, "(huge.txt: diff not shown") || !strings.Contains(r.Diff, "larger than 1048576 bytes") {
		t.Errorf("over a file larger than %d bytes: %+v", maxDiffInput, r)
	}
	if readTestFile(t, filepath.Join(root, "huge.txt")) != "small\n" {
		t.Error("the write over the large file did not happen")
	}
	if r := call(t, env, EditFileName, map[string]string{"path": "huge.txt", "old_text": "nowhere", "new_text": "x"}); !r.IsError || r.Diff != "" {
		t.Errorf("a failed edit reports a diff: %+v", r)
	}
}

func TestClipDiffSaysWhatWasCut(t *testing.T) {
	d := "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n"
	if got := clipDiff(d, len(d)); got != d {
		t.Errorf("a diff within the bound was changed: %q", got)
	}
	got := clipDiff(d, 20) // inside the third line: cut after the second
	want := "--- a/f\n+++ b/f\n[diff cut: 3 more lines (22 bytes) not shown]\n"
	if got != want {
		t.Errorf("clipDiff = %q, want %q", got, want)
	}
}
