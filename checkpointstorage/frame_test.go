package checkpointstorage

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadMetadata feeds arbitrary bytes as a _metadata file: reading must
// either succeed or return a *CorruptError, never panic.
func FuzzReadMetadata(f *testing.F) {
	payload, _ := json.Marshal(Metadata{ID: 1, JobID: "j", Tasks: map[string][]byte{"a/0": {1}}, Handles: []Handle{{Path: "chk-1/a", Size: 1}}})
	f.Add(encodeFrame(metadataMagic, payload))
	f.Add(encodeFrame(metadataMagic, []byte("{")))
	f.Add([]byte("WEIRMETA"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(dir, "_metadata")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readMetadataFile(p, 1); err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error %v is not ErrCorrupt", err)
		}
	})
}
