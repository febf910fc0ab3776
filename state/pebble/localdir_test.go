package pebble

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// A backend opened under a local dir removes the directories that killed
// processes left there, and only those.
func TestOpenRemovesDirectoriesOfGoneProcesses(t *testing.T) {
	local := t.TempDir()
	mk := func(name, owner string) string {
		dir := filepath.Join(local, name)
		if err := os.MkdirAll(filepath.Join(dir, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
		if owner != "" {
			if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	// This process's pid with another start time: a process that is gone
	// and whose pid was reused.
	gone := mk(dirPrefix+"op-0-1", strconv.Itoa(os.Getpid())+" 1")
	live := mk(dirPrefix+"op-1-2", processID(os.Getpid()))
	unmarked := mk(dirPrefix+"op-2-3", "")
	other := mk("something-else", strconv.Itoa(os.Getpid())+" 1")
	b, err := New(Options{LocalDir: local})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("%s of a gone process is still there (%v)", gone, err)
	}
	for _, d := range []string{live, unmarked, other, b.Dir()} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(b.Dir(), ownerFile)); string(got) != processID(os.Getpid()) {
		t.Errorf("owner file %q, want %q", got, processID(os.Getpid()))
	}
}
