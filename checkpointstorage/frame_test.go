package checkpointstorage

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzReadMetadata feeds arbitrary bytes as a _metadata file, either as
// they are or framed with a valid header and checksum (so that the fuzzer
// reaches the JSON payload). Reading must never panic; an error is a
// *CorruptError naming the file; metadata that reads passes the checks
// WriteMetadata makes (a restore and GC never touch a file outside the
// checkpoint directory) and survives a write → read round trip unchanged.
// Seeds are in testdata/fuzz/FuzzReadMetadata.
//
//	go test -run '^$' -fuzz '^FuzzReadMetadata$' -fuzztime 10m -parallel 1 ./checkpointstorage/
func FuzzReadMetadata(f *testing.F) {
	payload, _ := json.Marshal(Metadata{ID: 1, JobID: "j", Tasks: map[string][]byte{"a/0": {1}}, Handles: []Handle{{Path: "chk-1/a", Size: 1}}})
	f.Add(encodeFrame(metadataMagic, payload), false)
	f.Add(payload, true)
	f.Add(encodeFrame(metadataMagic, []byte("{")), false)
	f.Add([]byte("WEIRMETA"), false)
	f.Add([]byte(`{"id":1,"handles":[{"path":"../outside"}]}`), true)
	dir := f.TempDir()
	s := newFS(dir, dirObjects{dir: dir}, Options{})
	f.Fuzz(func(t *testing.T, b []byte, framed bool) {
		if framed {
			b = encodeFrame(metadataMagic, b)
		}
		p := filepath.Join(dir, "_metadata")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := s.readMetadataFile("_metadata", 0)
		var cerr *CorruptError
		switch {
		case err != nil && (!errors.As(err, &cerr) || !errors.Is(err, ErrCorrupt) || cerr.Path != p):
			t.Fatalf("error %v is not a *CorruptError naming %s", err, p)
		case err != nil:
			return
		}
		if err := validateMetadata(m); err != nil {
			t.Fatalf("read metadata that WriteMetadata refuses: %v", err)
		}
		again, _ := json.Marshal(m)
		if err := os.WriteFile(p, encodeFrame(metadataMagic, again), 0o644); err != nil {
			t.Fatal(err)
		}
		m2, err := s.readMetadataFile("_metadata", m.ID)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip of %+v gave %+v, %v", m, m2, err)
		}
	})
}
