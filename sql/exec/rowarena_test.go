package exec

import (
	"bytes"
	"math/rand"
	"testing"
	"unsafe"

	"github.com/weirstream/weir/sql/binrow"
)

// Rows placed in an arena read back as they were written, however many
// chunks they fill and whatever came after them, and encode as a row of
// its own allocation does; a row too large for a chunk gets its own.
func TestRowArenaKeepsEveryRow(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var a rowArena
	var want [][]byte
	var got []stateRow
	chunks := map[unsafe.Pointer]bool{}
	total := 0
	for total < 3*arenaChunk {
		n := rng.Intn(600)
		if rng.Intn(50) == 0 {
			n = arenaMaxRow + rng.Intn(1000) // alone
		}
		b := make([]byte, n)
		rng.Read(b)
		r := a.row(binrow.Row(b))
		if n+5 <= arenaMaxRow {
			chunks[unsafe.Pointer(unsafe.SliceData(a.chunk[:1]))] = true
			total += n + 5
		}
		want, got = append(want, b), append(got, r)
	}
	if len(chunks) < 3 {
		t.Fatalf("%d chunks for %d bytes of rows", len(chunks), total)
	}
	codec := stateRowCodec{what: "test", layout: rowLayout(binaryJoinTypes)}
	for i, r := range got {
		if !r.binary() || !bytes.Equal(r.bin(), want[i]) {
			t.Fatalf("row %d: read %x, wrote %x", i, r.bin(), want[i])
		}
		alone := binaryRow(binrow.Row(want[i]))
		if enc, own := codec.Encode(nil, r), codec.Encode(nil, alone); !bytes.Equal(enc, own) {
			t.Fatalf("row %d encodes as %x, a row of its own as %x", i, enc, own)
		}
		inChunk := false
		for c := range chunks {
			off := uintptr(r.p) - uintptr(c)
			inChunk = inChunk || off < arenaChunk
		}
		if big := len(want[i])+5 > arenaMaxRow; big == inChunk {
			t.Fatalf("row %d of %d bytes: in a chunk %v", i, len(want[i]), inChunk)
		}
	}
}
