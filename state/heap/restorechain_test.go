package heap

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// listPayload is a list payload (no TTL) of the given element bytes.
func listPayload(elems ...string) []byte {
	b := wire.AppendUvarint(nil, uint64(len(elems)))
	for _, e := range elems {
		b = wire.AppendString(b, e)
	}
	return b
}

// TestAppendList: a delta's appended elements join the restored list when
// it has the length the delta was written after, and are refused as
// corrupt, saying both lengths, when it does not or a payload is cut.
func TestAppendList(t *testing.T) {
	got, err := appendList(listPayload("a", "b"), 2, listPayload("c"))
	if err != nil || !slices.Equal(got, listPayload("a", "b", "c")) {
		t.Fatalf("appendList = %x, %v; want %x", got, err, listPayload("a", "b", "c"))
	}
	if got, err = appendList(nil, 0, listPayload("x")); err != nil || !slices.Equal(got, listPayload("x")) {
		t.Fatalf("appendList onto no list = %x, %v", got, err)
	}
	for _, c := range []struct {
		old, tail []byte
		from      uint64
		want      string
	}{
		{listPayload("a"), listPayload("c"), 2, "appends to a list of 2 elements, the chain holds 1"},
		{nil, listPayload("c"), 1, "appends to a list of 1 elements, the chain holds 0"},
		{listPayload("a"), []byte{0x80}, 1, "list payload"},
	} {
		_, err := appendList(c.old, c.from, c.tail)
		if !errors.Is(err, state.ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("appendList(%x, %d, %x) = %v, want a corrupt-state error saying %q", c.old, c.from, c.tail, err, c.want)
		}
	}
}
