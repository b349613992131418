package statefile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAppendLineAndWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log")
	for _, s := range []string{"a", "b\n", ""} {
		if err := AppendLine(p, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if data, _ := os.ReadFile(p); string(data) != "a\nb\n\n" {
		t.Errorf("AppendLine wrote %q", data)
	}
	q := filepath.Join(dir, "cfg")
	for _, s := range []string{"first", "second"} {
		if err := WriteFileAtomic(q, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := os.Stat(q)
	if data, _ := os.ReadFile(q); err != nil || string(data) != "second" || fi.Mode().Perm() != 0o600 {
		t.Errorf("WriteFileAtomic: %q %v %v", data, fi.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, []string{"cfg", "log", "log.lock"}) {
		t.Errorf("directory holds %v; temp files left?", names)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "missing", "x"), nil, 0o644); err == nil {
		t.Error("write into a missing dir succeeded")
	}
}

// Each replaced version gets its own modification time, even within one
// tick of the kernel's coarse clock, so (file, size, mtime) names a version.
func TestReplaceFileStampsEveryVersion(t *testing.T) {
	path := t.TempDir() + "/doc"
	var last time.Time
	for i := range 20 {
		if err := ReplaceFile(path, []byte(fmt.Sprintf("v%02d", i)), 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.ModTime().After(last) {
			t.Fatalf("version %d has modification time %v, not after %v", i, fi.ModTime(), last)
		}
		last = fi.ModTime()
	}
}

// An Appender called with its context done writes nothing.
func TestAppenderWritesNothingForACancelledCall(t *testing.T) {
	p := filepath.Join(t.TempDir(), "events.jsonl")
	a := NewAppender(p)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := a.AppendLine(ctx, []byte(`{"n":1}`)); !errors.Is(err, context.Canceled) {
		t.Fatalf("append with its context done: %v, want context.Canceled", err)
	}
	if err := a.AppendLine(t.Context(), []byte(`{"n":2}`)); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(p); err != nil || string(data) != "{\"n\":2}\n" {
		t.Fatalf("the file holds %q, %v; want only the line appended in time", data, err)
	}
}

// Lines appended together through an Appender share writes, and each
// still lands whole, once, with the others' around it.
func TestAppenderWritesEveryLineWholeOnce(t *testing.T) {
	const goroutines, per = 8, 300
	p := filepath.Join(t.TempDir(), "events.jsonl")
	a := NewAppender(p)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range per {
				line := fmt.Sprintf(`{"g":%d,"i":%d,"pad":%q}`, g, i, strings.Repeat("x", (g*per+i)%97))
				if i%2 == 0 {
					line += "\n" // a line that ends with its newline gets no second
				}
				if err := a.AppendLine(t.Context(), []byte(line)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var v struct{ G, I int }
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("a torn or glued line %q: %v", l, err)
		}
		k := fmt.Sprint(v.G, v.I)
		if seen[k] {
			t.Fatalf("line %s written twice", k)
		}
		seen[k] = true
	}
	if len(seen) != goroutines*per {
		t.Fatalf("%d lines on disk, want %d", len(seen), goroutines*per)
	}
}
