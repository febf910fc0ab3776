package heap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/state"
)

// EstimatedSize of entries of one size is exact: their count times the
// bytes a snapshot writes for one (the key with its length, the value),
// whichever entries it samples; it follows deletes and is near the
// snapshot's own size.
func TestEstimatedSizeOfUniformEntries(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	if n := b.EstimatedSize(); n != 0 {
		t.Fatalf("empty backend: %d bytes, want 0", n)
	}
	v := state.Value(b, state.ValueDescriptor[string]{Name: "v"})
	value := strings.Repeat("x", 100)
	for k := range 1000 {
		at(b, fmt.Sprintf("k%03d", k))
		v.Update(value)
	}
	key := len(state.AnyCodec{}.Encode(nil, "k000"))
	perEntry := int64(1 + key + 1 + len(value)) // uvarint lengths: key, value
	if n := b.EstimatedSize(); n != 1000*perEntry {
		t.Errorf("1000 entries of %d bytes: estimated %d, want %d", perEntry, n, 1000*perEntry)
	}
	blob := int64(len(snapshotBlob(t, b, 0)))
	if est := b.EstimatedSize(); est > blob || est < blob*9/10 {
		t.Errorf("estimated %d bytes; the snapshot holds %d", est, blob)
	}
	for k := range 500 {
		at(b, fmt.Sprintf("k%03d", k))
		v.Clear()
	}
	if n := b.EstimatedSize(); n != 500*perEntry {
		t.Errorf("after deleting half: %d, want %d", n, 500*perEntry)
	}
}
