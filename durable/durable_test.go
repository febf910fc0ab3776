package durable

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFile replaces a file whole and leaves no temporary file behind,
// also when it fails.
func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "marker")
	for _, data := range []string{"1\n", "22\n"} {
		if err := WriteFile(path, []byte(data)); err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(path); err != nil || string(got) != data {
			t.Fatalf("read %q, %v; want %q", got, err, data)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
			t.Fatalf("mode %v, %v; want -rw-r--r--", st.Mode(), err)
		}
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), []byte("y")); err == nil {
		t.Fatal("no error writing into a missing directory")
	}
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(dir, "d"), []byte("y")); err == nil {
		t.Fatal("no error renaming over a directory")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("directory holds %v; want marker and d only", entries)
	}
}
