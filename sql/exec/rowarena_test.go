package exec

import (
	"bytes"
	"math/rand"
	"testing"
	"time"
	"unsafe"

	"github.com/weirstream/weir/sql/binrow"
)

// Rows placed in an arena read back as they were written, however many
// chunks they fill and whatever came after them, and encode as a row of
// its own allocation does; a chunk is filled before the next is made and
// never moves; a row too large for a chunk gets its own allocation.
func TestRowArenaKeepsEveryRow(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	var a rowArena
	var want [][]byte
	var got []stateRow
	chunks := map[unsafe.Pointer]bool{}
	total := 0
	add := func(n int) {
		b := make([]byte, n)
		rng.Read(b)
		r := a.row(binrow.Row(b))
		if n+5 <= arenaMaxRow {
			if cap(a.chunk) != arenaChunk {
				t.Fatalf("a chunk of %d bytes, want %d (moved or grown)", cap(a.chunk), arenaChunk)
			}
			chunks[unsafe.Pointer(unsafe.SliceData(a.chunk[:1]))] = true
			total += n + 5
		}
		want, got = append(want, b), append(got, r)
	}
	for total < 3*arenaChunk {
		n := rng.Intn(600)
		if rng.Intn(50) == 0 {
			n = arenaMaxRow + rng.Intn(1000) // alone
		}
		add(n)
	}
	for rest := cap(a.chunk) - len(a.chunk); rest > arenaMaxRow || rest < 5; rest = cap(a.chunk) - len(a.chunk) {
		add(500)
	}
	add(cap(a.chunk) - len(a.chunk) - 5) // fills the chunk to its last byte
	if len(a.chunk) != arenaChunk {
		t.Fatalf("filled to %d of %d", len(a.chunk), arenaChunk)
	}
	filled := len(chunks)
	add(0) // the next chunk
	if len(chunks) != filled+1 {
		t.Fatalf("%d chunks after a full one, want %d", len(chunks), filled+1)
	}
	// A row starts a chunk only when it does not fit in the last one's
	// rest, which a row of at most arenaMaxRow bytes leaves.
	if most := total/(arenaChunk-arenaMaxRow) + 1; len(chunks) < 3 || len(chunks) > most {
		t.Fatalf("%d chunks for %d bytes of rows, want 3 to %d", len(chunks), total, most)
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

// A join side without a TTL keeps its binary rows in its arena; with a TTL
// each row is its own allocation, since a chunk outlives its rows while a
// string read from any of them is kept; a side probed more than added to
// keeps fields.
func TestJoinListRowsInChunksOnlyWithoutTTL(t *testing.T) {
	row := []any{int64(1), "s", nil, time.UnixMilli(0).UTC()}
	for _, ttl := range []bool{false, true} {
		opts := JoinOptions{LeftKeys: []int{0}, RightKeys: []int{0}, LeftArity: 4, RightArity: 4,
			LeftInsertOnly: true, RightInsertOnly: true, LeftTypes: binaryJoinTypes, RightTypes: binaryJoinTypes}
		if ttl {
			opts.StateTTL = time.Hour
		}
		j, err := NewJoin(opts)
		if err != nil {
			t.Fatal(err)
		}
		r := j.listRow(0, row)
		if !r.binary() {
			t.Fatalf("ttl %v: a row of fields", ttl)
		}
		if inArena := len(j.arena[0].chunk) > 0 && unsafe.Pointer(&j.arena[0].chunk[0]) == r.p; inArena == ttl {
			t.Fatalf("ttl %v: row in the arena %v", ttl, inArena)
		}
		j.probed[0] = 1
		if r := j.listRow(0, row); r.binary() {
			t.Fatalf("ttl %v: a side probed more than added to keeps binary rows", ttl)
		}
	}
}
