package main

import (
	"os"
	"path/filepath"
	"testing"
)

// fileRows counts the lines of the finished part files only: not those a
// part file still hidden holds (in progress, or pending its checkpoint's
// commit), nor success files, Weir's committed-checkpoint markers or a
// hidden directory's files (Flink's staging directory in batch mode); a
// last line without its newline counts. A query that wrote no files is
// not counted.
func TestFileRowsCountsFinishedPartFiles(t *testing.T) {
	out := filepath.Join(t.TempDir(), "data", "output")
	files := map[string]string{
		"0/bid/dt=2026-12-01/hm=10%3A00/part-a1b2-0-1":                     "1,2,3\n4,5,6\n7,8,9\n",
		"0/bid/dt=2026-12-01/hm=10%3A00/_SUCCESS":                          "",
		"0/bid/dt=2026-12-01/hm=10%3A01/part-c3d4-1-2":                     "1,2,3\n4,5,6",
		"0/bid/dt=2026-12-01/hm=10%3A01/.part-c3d4-1-3.pending":            "x\ny\n",
		"0/bid/dt=2026-12-01/hm=10%3A01/.part-e5f6-0.inprogress.0a1b2c3d4": "x\n",
		"0/bid/.weir-committed/job/subtask-0":                              "3\n",
		"0/bid/.staging_1700000000000/part-a1b2-0-1":                       "x\n",
	}
	for name, data := range files {
		path := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if n, ok, err := fileRows(out); err != nil || !ok || n != 5 {
		t.Fatalf("fileRows = %d, %v, %v; want 5 rows", n, ok, err)
	}
	if n, ok, err := fileRows(filepath.Join(t.TempDir(), "data", "output")); err != nil || ok || n != 0 {
		t.Fatalf("no output directory: fileRows = %d, %v, %v; want not counted", n, ok, err)
	}
}
