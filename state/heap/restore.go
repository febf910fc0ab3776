package heap

import (
	"bytes"
	"fmt"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
)

// rawState is a restored state not yet registered: per group index, each
// key's payload bytes, decoded when the state is registered (only then is
// its codec known). It is never modified after Restore.
type rawState struct {
	kind   state.Kind
	hasTTL bool
	maps   []keyMap[[]byte]
}

func (r *rawState) keys() []any {
	var ks []any
	for _, m := range r.maps {
		for k := range m.all() {
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
		if bytes.HasPrefix(blob, []byte(manifestMagic)) {
			if err := b.restoreChain(blob); err != nil {
				return fmt.Errorf("heap: restoring incremental snapshot %d of %d: %w", i+1, len(blobs), err)
			}
			continue
		}
		if err := keyed.ReadBlob(blob, b.opts.MaxParallelism, b.opts.KeyGroupRange.Contains, &restorer{b: b}); err != nil {
			return fmt.Errorf("heap: restoring snapshot blob %d of %d: %w", i, len(blobs), err)
		}
	}
	return nil
}

// restorer is the visitor of one blob's entries.
type restorer struct {
	b    *Backend
	name string
	raw  *rawState
}

func (r *restorer) State(name string, kind state.Kind, hasTTL bool) error {
	raw, err := r.b.pendingState(name, kind, hasTTL)
	r.name, r.raw = name, raw
	return err
}

func (r *restorer) Entry(kg int, kb, p []byte) error {
	return r.b.restoreEntry(r.raw, kg-r.b.opts.KeyGroupRange.Start, r.name, kb, p)
}

// pendingState returns the raw state name restores into, creating it;
// blobs of one checkpoint must agree on its kind and TTL flag.
func (b *Backend) pendingState(name string, kind state.Kind, hasTTL bool) (*rawState, error) {
	raw, ok := b.pending[name]
	if !ok {
		raw = &rawState{kind: kind, hasTTL: hasTTL, maps: make([]keyMap[[]byte], b.groupCount())}
		b.pending[name] = raw
		return raw, nil
	}
	if raw.kind != kind || raw.hasTTL != hasTTL {
		return nil, corrupt("state %q differs between blobs: %v/ttl=%v and %v/ttl=%v", name, raw.kind, raw.hasTTL, kind, hasTTL)
	}
	return raw, nil
}

func (b *Backend) restoreEntry(raw *rawState, i int, name string, kb, p []byte) error {
	k, err := decodeKey(b.opts.KeyCodec, kb)
	if err != nil {
		return fmt.Errorf("state %q: key: %w", name, err)
	}
	m := &raw.maps[i]
	if _, dup := m.get(k); dup {
		return corrupt("state %q: key %s appears twice (the same subtask's blob restored twice?)", name, keyed.KeyString(k))
	}
	m.set(k, bytes.Clone(p))
	return nil
}
