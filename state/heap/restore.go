package heap

import (
	"bytes"
	"fmt"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// rawState is a restored state not yet registered: per group index, each
// key's payload bytes, decoded when the state is registered (only then is
// its codec known). It is never modified after Restore.
type rawState struct {
	kind   state.Kind
	hasTTL bool
	maps   []map[any][]byte
}

func (r *rawState) keys() []any {
	var ks []any
	for _, m := range r.maps {
		for k := range m {
			ks = append(ks, k)
		}
	}
	return ks
}

// capture writes the payloads back verbatim.
func (r *rawState) capture(name string) captured {
	return &capturedGroups[[]byte]{
		hdr:    stateHeader{name: name, kind: r.kind, hasTTL: r.hasTTL},
		maps:   r.maps,
		encode: func(buf, p []byte, _ int64) ([]byte, bool) { return append(buf, p...), true },
	}
}

// Restore loads blobs written by Snapshot.Write of any subtasks, of any old
// parallelism with the same MaxParallelism, keeping the key groups in this
// backend's range. An empty blob is skipped. It must be called at most once,
// before any state is registered (state.ErrRestoreAfterUse). Errors wrap
// state.ErrCorrupt or, for a different MaxParallelism, state.ErrIncompatible;
// after an error the backend must be discarded.
func (b *Backend) Restore(blobs [][]byte) error {
	if b.restored || len(b.tables) > 0 {
		return state.ErrRestoreAfterUse
	}
	b.restored = true
	for i, blob := range blobs {
		if len(blob) == 0 {
			continue
		}
		if err := b.restoreBlob(blob); err != nil {
			return fmt.Errorf("heap: restoring snapshot blob %d of %d: %w", i, len(blobs), err)
		}
	}
	return nil
}

func (b *Backend) restoreBlob(blob []byte) error {
	r := wire.NewReader(blob)
	if magic := r.Fixed(len(blobMagic)); string(magic) != blobMagic {
		return corrupt("bad magic %q, want %q", magic, blobMagic)
	}
	if mp := r.Uvarint(); r.Err() == nil && mp != uint64(b.opts.MaxParallelism) {
		return fmt.Errorf("%w: snapshot has max parallelism %d, backend %d; max parallelism cannot change across restores",
			state.ErrIncompatible, mp, b.opts.MaxParallelism)
	}
	n := r.Count(4)
	for i := 0; i < n && r.Err() == nil; i++ {
		if err := b.restoreState(r); err != nil {
			return err
		}
	}
	if r.Err() != nil || r.Len() != 0 {
		return corrupt("keyed snapshot: %v, %d trailing bytes", r.Err(), r.Len())
	}
	return nil
}

func (b *Backend) restoreState(r *wire.Reader) error {
	name, kind, flags := string(r.Bytes()), state.Kind(r.Byte()), r.Byte()
	groups := r.Count(2)
	if r.Err() != nil {
		return nil // reported by restoreBlob
	}
	if kind < state.KindValue || kind > state.KindAggregating || flags > 1 {
		return corrupt("state %q: kind %d, flags %d", name, kind, flags)
	}
	raw, err := b.pendingState(name, kind, flags == 1)
	if err != nil {
		return err
	}
	for g := 0; g < groups && r.Err() == nil; g++ {
		if err := b.restoreGroup(r, name, raw); err != nil {
			return err
		}
	}
	return nil
}

// pendingState returns the raw state name restores into, creating it;
// blobs of one checkpoint must agree on its kind and TTL flag.
func (b *Backend) pendingState(name string, kind state.Kind, hasTTL bool) (*rawState, error) {
	raw, ok := b.pending[name]
	if !ok {
		raw = &rawState{kind: kind, hasTTL: hasTTL, maps: make([]map[any][]byte, b.groupCount())}
		b.pending[name] = raw
		return raw, nil
	}
	if raw.kind != kind || raw.hasTTL != hasTTL {
		return nil, corrupt("state %q differs between blobs: %v/ttl=%v and %v/ttl=%v", name, raw.kind, raw.hasTTL, kind, hasTTL)
	}
	return raw, nil
}

func (b *Backend) restoreGroup(r *wire.Reader, name string, raw *rawState) error {
	kg, n := r.Uvarint(), r.Count(2)
	if r.Err() != nil {
		return nil
	}
	if kg >= uint64(b.opts.MaxParallelism) {
		return corrupt("state %q: key group %d ≥ max parallelism %d", name, kg, b.opts.MaxParallelism)
	}
	rng := b.opts.KeyGroupRange
	own := rng.Contains(int(kg))
	for e := 0; e < n && r.Err() == nil; e++ {
		kb, p := r.Bytes(), r.Bytes()
		if r.Err() != nil || !own {
			continue
		}
		if err := b.restoreEntry(raw, int(kg)-rng.Start, name, kb, p); err != nil {
			return err
		}
	}
	return nil
}

func (b *Backend) restoreEntry(raw *rawState, i int, name string, kb, p []byte) error {
	k, err := decodeKey(b.opts.KeyCodec, kb)
	if err != nil {
		return fmt.Errorf("state %q: key: %w", name, err)
	}
	m := raw.maps[i]
	if m == nil {
		m = make(map[any][]byte)
		raw.maps[i] = m
	}
	if _, dup := m[k]; dup {
		return corrupt("state %q: key %v appears twice (the same subtask's blob restored twice?)", name, k)
	}
	m[k] = bytes.Clone(p)
	return nil
}
