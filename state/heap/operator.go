package heap

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// opBlobMagic starts every operator snapshot blob; its last byte is the
// format version. Format (integers uvarint):
//
//	"WOS1" nStates (name(len+bytes) mode(byte) nElems element(len+bytes)*)*
const opBlobMagic = "WOS1"

// OperatorBackend is the operator (non-keyed) state backend of one subtask
// (Flink's DefaultOperatorStateBackend): named lists, redistributed on
// restore by even split or union. It implements state.OperatorStateBackend
// and is used by the subtask's goroutine only.
type OperatorBackend struct {
	lists    map[string]*opList
	pending  map[string]*opRaw // restored, not yet registered
	restored bool
}

var _ state.OperatorStateBackend = (*OperatorBackend)(nil)

// opList is one registered operator list. Its elements are only ever
// appended in place (beyond the length a snapshot captured); Update and
// Delete replace the slice, so a captured slice never changes.
type opList struct {
	spec  state.StateSpec
	mode  state.Redistribution
	items []any
}

// opRaw is a restored list's share for this subtask, still encoded.
type opRaw struct {
	mode  state.Redistribution
	elems [][]byte
}

// NewOperatorBackend returns an empty operator state backend.
func NewOperatorBackend() *OperatorBackend {
	return &OperatorBackend{lists: make(map[string]*opList), pending: make(map[string]*opRaw)}
}

// ListTable registers (or returns) the list state spec names, with
// redistribution mode. The name may not be registered with another mode,
// nor have been restored with another mode (state.ErrIncompatible).
func (b *OperatorBackend) ListTable(spec state.StateSpec, mode state.Redistribution) (state.ListTable, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Kind != state.KindList || spec.TTL != nil || mode > state.Union {
		return nil, fmt.Errorf("%w: operator state %q must be a list without TTL, with mode even-split or union", state.ErrInvalidDescriptor, spec.Name)
	}
	if l, ok := b.lists[spec.Name]; ok {
		if l.mode != mode {
			return nil, fmt.Errorf("%w: operator state %q is registered as %v, requested as %v", state.ErrIncompatible, spec.Name, l.mode, mode)
		}
		return l, nil
	}
	l := &opList{spec: spec, mode: mode}
	if err := b.loadPending(l); err != nil {
		return nil, err
	}
	b.lists[spec.Name] = l
	return l, nil
}

func (b *OperatorBackend) loadPending(l *opList) error {
	raw, ok := b.pending[l.spec.Name]
	if !ok {
		return nil
	}
	if raw.mode != l.mode {
		return fmt.Errorf("%w: operator state %q was restored as %v, registered as %v", state.ErrIncompatible, l.spec.Name, raw.mode, l.mode)
	}
	for _, p := range raw.elems {
		v, err := decodeAll(l.spec.Codec, p)
		if err != nil {
			return fmt.Errorf("restoring operator state %q: %w (did its codec change?)", l.spec.Name, err)
		}
		l.items = append(l.items, v)
	}
	delete(b.pending, l.spec.Name)
	return nil
}

func (l *opList) Get() []any {
	if len(l.items) == 0 {
		return nil
	}
	return slices.Clone(l.items)
}

func (l *opList) Add(v any)       { l.items = append(l.items, v) }
func (l *opList) AddAll(vs []any) { l.items = append(l.items, vs...) }
func (l *opList) Delete()         { l.items = nil }

func (l *opList) Update(vs []any) {
	if len(vs) == 0 {
		l.items = nil
		return
	}
	l.items = slices.Clone(vs)
}

// opCapture is one list's part of an operator snapshot: either decoded
// items with their codec, or restored bytes.
type opCapture struct {
	name  string
	mode  state.Redistribution
	codec state.Codec[any]
	items []any
	raw   [][]byte
}

type opSnapshot struct{ lists []opCapture }

// Snapshot captures every list (slice headers clipped to their length, no
// encoding); restored lists not yet registered are captured as bytes.
func (b *OperatorBackend) Snapshot() (state.Snapshot, error) {
	s := &opSnapshot{}
	for name, l := range b.lists {
		s.lists = append(s.lists, opCapture{name: name, mode: l.mode, codec: l.spec.Codec, items: slices.Clip(l.items)})
	}
	for name, raw := range b.pending {
		s.lists = append(s.lists, opCapture{name: name, mode: raw.mode, raw: raw.elems})
	}
	slices.SortFunc(s.lists, func(x, y opCapture) int { return strings.Compare(x.name, y.name) })
	return s, nil
}

// Write encodes the captured lists. A codec that panics makes Write return
// an error.
func (s *opSnapshot) Write() (blob []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			blob, err = nil, fmt.Errorf("heap: writing operator state snapshot: %v", r)
		}
	}()
	blob = append(blob, opBlobMagic...)
	blob = wire.AppendUvarint(blob, uint64(len(s.lists)))
	for _, c := range s.lists {
		blob = wire.AppendString(blob, c.name)
		blob = append(blob, byte(c.mode))
		blob = wire.AppendUvarint(blob, uint64(len(c.items)+len(c.raw)))
		for _, v := range c.items {
			blob = appendPrefixed(blob, c.codec, v)
		}
		for _, p := range c.raw {
			blob = wire.AppendBytes(blob, p)
		}
	}
	return blob, nil
}

// Restore loads the blobs of every old subtask, in old subtask order, and
// keeps subtask newIndex's share of newParallelism: with EvenSplit a
// contiguous, nearly equal part of the concatenation of all old lists (the
// first len%newParallelism subtasks get one element more); with Union all of
// it. An empty blob is skipped. It must be called at most once, before any
// list is registered.
func (b *OperatorBackend) Restore(blobs [][]byte, newIndex, newParallelism int) error {
	if b.restored || len(b.lists) > 0 {
		return state.ErrRestoreAfterUse
	}
	if newParallelism < 1 || newIndex < 0 || newIndex >= newParallelism {
		return fmt.Errorf("heap: subtask %d of parallelism %d does not exist", newIndex, newParallelism)
	}
	b.restored = true
	all := make(map[string]*opRaw)
	for i, blob := range blobs {
		if err := parseOpBlob(blob, all); err != nil {
			return fmt.Errorf("heap: restoring operator snapshot blob %d of %d: %w", i, len(blobs), err)
		}
	}
	for name, raw := range all {
		if raw.mode == state.EvenSplit {
			raw.elems = evenShare(raw.elems, newIndex, newParallelism)
		}
		if len(raw.elems) > 0 {
			b.pending[name] = raw
		}
	}
	return nil
}

// evenShare returns part index of elems split into n contiguous parts whose
// sizes differ by at most one.
func evenShare[T any](elems []T, index, n int) []T {
	base, extra := len(elems)/n, len(elems)%n
	start := index*base + min(index, extra)
	size := base
	if index < extra {
		size++
	}
	return elems[start : start+size : start+size]
}

// parseOpBlob appends the lists of one blob to all.
func parseOpBlob(blob []byte, all map[string]*opRaw) error {
	if len(blob) == 0 {
		return nil
	}
	r := wire.NewReader(blob)
	if magic := r.Fixed(len(opBlobMagic)); string(magic) != opBlobMagic {
		return corrupt("bad magic %q, want %q", magic, opBlobMagic)
	}
	n := r.Count(3)
	for i := 0; i < n && r.Err() == nil; i++ {
		name, mode := string(r.Bytes()), state.Redistribution(r.Byte())
		elems := r.Count(1)
		if r.Err() != nil {
			break
		}
		raw, ok := all[name]
		if !ok {
			raw = &opRaw{mode: mode}
			all[name] = raw
		}
		if mode > state.Union || raw.mode != mode {
			return corrupt("operator state %q: mode %d (other blobs: %v)", name, mode, raw.mode)
		}
		for e := 0; e < elems && r.Err() == nil; e++ {
			raw.elems = append(raw.elems, bytes.Clone(r.Bytes()))
		}
	}
	if r.Err() != nil || r.Len() != 0 {
		return corrupt("operator snapshot: %v, %d trailing bytes", r.Err(), r.Len())
	}
	return nil
}
