package heap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/state"
)

// TestRestoreErrorQuotesKey: a restore that cannot decode an entry names
// the key quoted, its unprintable bytes escaped: SQL operators key by
// binary strings, which the message printed raw.
func TestRestoreErrorQuotesKey(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	key := "\x00\x00\x00\x07sku\x01"
	at(b, key)
	state.Value(b, state.ValueDescriptor[string]{Name: "v", Codec: state.StringCodec{}}).Update("not a number")
	r := restored(t, clock, snapshotBlob(t, b, 0))
	msg := fmt.Sprint(mustPanic(t, func() {
		at(r, key)
		state.Value(r, state.ValueDescriptor[int64]{Name: "v", Codec: state.Int64Codec{}}).Value()
	}))
	if want := `key "\x00\x00\x00\asku\x01"`; !strings.Contains(msg, want) {
		t.Fatalf("error %q does not name the key as %s", msg, want)
	}
}
