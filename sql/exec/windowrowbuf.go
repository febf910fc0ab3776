package exec

import (
	"strconv"

	"github.com/weirstream/weir/state"
)

// windowRowBuffer holds rows per window of the current key in a map state,
// in chunks: a window's newest rows under its id, up to windowChunkRows of
// them, and the chunks filled before under id#0, id#1, … (their count
// under id#n). Adding a row appends to the newest chunk alone, so
// buffering n rows of one key and window costs O(n) where one list
// rewritten on each row cost O(n²) (a window join keyed by the window
// alone, as Nexmark q5's, buffers every row of a window under one key).
type windowRowBuffer struct{ m state.MapState[string, []any] }

// windowChunkRows is the most rows a chunk holds.
const windowChunkRows = 64

func chunkID(id string, i int64) string { return id + "#" + strconv.FormatInt(i, 10) }

// add appends row to window id's rows.
func (b windowRowBuffer) add(id string, row []any) {
	open, _ := b.m.Get(id)
	if len(open) >= windowChunkRows {
		n := b.chunks(id)
		b.m.Put(chunkID(id, n), open)
		b.m.Put(id+"#n", []any{n + 1})
		open = make([]any, 0, windowChunkRows)
	}
	b.m.Put(id, append(open, row)) // state values may change in place and be put back
}

// chunks is the number of full chunks of window id.
func (b windowRowBuffer) chunks(id string) int64 {
	e, ok := b.m.Get(id + "#n")
	if !ok || len(e) != 1 {
		return 0
	}
	n, _ := e[0].(int64)
	return n
}

// take returns window id's rows, in the order they were added, and forgets
// them.
func (b windowRowBuffer) take(id string) []any {
	n := b.chunks(id)
	open, _ := b.m.Get(id)
	if n == 0 {
		b.m.Remove(id)
		return open
	}
	out := make([]any, 0, n*windowChunkRows+int64(len(open)))
	for i := range n {
		c, _ := b.m.Get(chunkID(id, i))
		out = append(out, c...)
		b.m.Remove(chunkID(id, i))
	}
	b.m.Remove(id + "#n")
	b.m.Remove(id)
	return append(out, open...)
}
