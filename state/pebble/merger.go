package pebble

import (
	"io"

	pebbledb "github.com/cockroachdb/pebble/v2"
)

// listMerger concatenates a list's merge operands (ListState.Add) oldest
// first, as Pebble's default merger does, but in time linear in the
// result: the default one prepends each older operand by copying what it
// has so far, quadratic in the number of operands, which a list grown by
// one Add per record has plenty of.
var listMerger = &pebbledb.Merger{
	Name: "weir.list-concat",
	Merge: func(_, value []byte) (pebbledb.ValueMerger, error) {
		return &concatMerger{newer: append([]byte(nil), value...)}, nil
	},
}

// concatMerger keeps the operands older than the first one apart, newest
// first, and joins everything once in Finish.
type concatMerger struct {
	older [][]byte // newest first
	size  int      // bytes in older
	newer []byte   // the first operand and those newer, oldest first
}

func (m *concatMerger) MergeNewer(value []byte) error {
	m.newer = append(m.newer, value...)
	return nil
}

func (m *concatMerger) MergeOlder(value []byte) error {
	m.older = append(m.older, append([]byte(nil), value...))
	m.size += len(value)
	return nil
}

func (m *concatMerger) Finish(bool) ([]byte, io.Closer, error) {
	if len(m.older) == 0 {
		return m.newer, nil, nil
	}
	out := make([]byte, 0, m.size+len(m.newer))
	for i := len(m.older) - 1; i >= 0; i-- {
		out = append(out, m.older[i]...)
	}
	return append(out, m.newer...), nil, nil
}
