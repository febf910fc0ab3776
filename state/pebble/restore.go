package pebble

import (
	"fmt"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
	"github.com/weirstream/weir/state/internal/wire"
)

// Restore loads blobs written by Snapshot.Write of any subtasks — of this
// backend or the heap backend, of any old parallelism with the same
// MaxParallelism — keeping the key groups in this backend's range, and
// manifests written by WriteFiles of this backend's incremental snapshots,
// whose files it fetches from Options.RestoreFiles (see restoreFiles). The
// payloads go into Pebble as they are (no codec is needed until a state is
// registered, when adopt checks them). An empty blob is skipped. It must be
// called at most once, before any state is registered
// (state.ErrRestoreAfterUse). Errors wrap state.ErrCorrupt or, for a
// different MaxParallelism, state.ErrIncompatible; after an error the
// backend must be discarded.
func (b *Backend) Restore(blobs [][]byte) error {
	if b.restored || len(b.states) > 0 {
		return state.ErrRestoreAfterUse
	}
	b.restored = true
	var ms []*manifest
	for i, blob := range blobs {
		if isManifest(blob) {
			m, err := decodeManifest(blob)
			if err != nil {
				return fmt.Errorf("pebble: restoring snapshot blob %d of %d: %w", i, len(blobs), err)
			}
			ms = append(ms, m)
		}
	}
	if len(ms) > 0 {
		if err := b.restoreFiles(ms); err != nil {
			return err
		}
	}
	w := newBatchWriter(b.db)
	for i, blob := range blobs {
		if len(blob) == 0 || isManifest(blob) {
			continue
		}
		if err := keyed.ReadBlob(blob, b.opts.MaxParallelism, b.opts.KeyGroupRange.Contains, &restorer{b: b, w: w}); err != nil {
			return fmt.Errorf("pebble: restoring snapshot blob %d of %d: %w", i, len(blobs), err)
		}
	}
	if err := w.flush(); err != nil {
		return fmt.Errorf("pebble: restoring: %w", err)
	}
	return nil
}

// restorer is the visitor of one blob's entries.
type restorer struct {
	b  *Backend
	w  *batchWriter
	si *stateInfo
}

func (r *restorer) State(name string, kind state.Kind, hasTS bool) error {
	si, err := r.b.pendingState(name, kind, hasTS)
	r.si = si
	return err
}

func (r *restorer) Entry(kg int, kb, p []byte) error {
	if _, err := decodeKey(r.b.opts.KeyCodec, kb); err != nil {
		return fmt.Errorf("state %q: key: %w", r.si.name, err)
	}
	return restoreEntry(r.w, r.si, appendKeyPrefix(nil, kg, r.si.id, kb), p)
}

// pendingState returns the state name restores into, creating it; blobs
// of one checkpoint must agree on its kind and TTL flag.
func (b *Backend) pendingState(name string, kind state.Kind, hasTS bool) (*stateInfo, error) {
	si, ok := b.states[name]
	if !ok {
		return b.newState(name, kind, hasTS)
	}
	if si.kind != kind || si.hasTS != hasTS {
		return nil, corrupt("state %q differs between blobs: %v/ttl=%v and %v/ttl=%v", name, si.kind, si.hasTS, kind, hasTS)
	}
	return si, nil
}

// restoreEntry writes one key's snapshot payload in the stored form: a
// value as it is, a list without its count, a map as one entry per user
// key.
func restoreEntry(w *batchWriter, si *stateInfo, prefix, p []byte) error {
	switch si.kind {
	case state.KindList:
		r := wire.NewReader(p)
		r.Uvarint()
		if r.Err() != nil {
			return corrupt("state %q: list payload", si.name)
		}
		return w.set(prefix, r.Rest())
	case state.KindMap:
		return restoreMap(w, si, prefix, p)
	}
	return w.set(prefix, p)
}

func restoreMap(w *batchWriter, si *stateInfo, prefix, p []byte) error {
	r := wire.NewReader(p)
	n := r.Count(2)
	for j := 0; j < n && r.Err() == nil; j++ {
		var ts int64
		if si.hasTS {
			ts = r.Varint()
		}
		uk, v := r.Bytes(), r.Bytes()
		if r.Err() != nil {
			break
		}
		var val []byte
		if si.hasTS {
			val = wire.AppendVarint(val, ts)
		}
		if err := w.set(append(append([]byte(nil), prefix...), uk...), append(val, v...)); err != nil {
			return err
		}
	}
	if r.Err() != nil || r.Len() != 0 {
		return corrupt("state %q: map payload: %v, %d bytes left", si.name, r.Err(), r.Len())
	}
	return nil
}
