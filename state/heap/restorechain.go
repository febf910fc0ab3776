package heap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
	"github.com/weirstream/weir/state/internal/wire"
)

// restoreChain restores an incremental checkpoint's manifest: it fetches
// the base and the deltas it names, in order, loads the base and applies
// the deltas (incremental.go).
func (b *Backend) restoreChain(blob []byte) error {
	var m manifest
	if err := json.Unmarshal(blob[len(manifestMagic):], &m); err != nil {
		return corrupt("incremental snapshot manifest: %v", err)
	}
	switch {
	case m.MaxParallelism != b.opts.MaxParallelism:
		return fmt.Errorf("%w: snapshot has max parallelism %d, backend %d; max parallelism cannot change across restores",
			state.ErrIncompatible, m.MaxParallelism, b.opts.MaxParallelism)
	case len(m.Files) == 0:
		return corrupt("incremental snapshot manifest names no files")
	case b.opts.RestoreFiles == nil:
		return fmt.Errorf("%w: the snapshot is incremental (its state is in files of checkpoint storage) "+
			"and the backend was given no checkpoint storage to fetch them from", state.ErrIncompatible)
	}
	dir, err := os.MkdirTemp("", "weir-heap-restore-*")
	if err != nil {
		return fmt.Errorf("a local directory for the restore: %w", err)
	}
	defer os.RemoveAll(dir)
	for j, h := range m.Files {
		data, err := b.fetch(h, filepath.Join(dir, fmt.Sprint(j)))
		if err != nil {
			return err
		}
		if j == 0 {
			err = keyed.ReadBlob(data, b.opts.MaxParallelism, b.opts.KeyGroupRange.Contains, &restorer{b: b})
		} else {
			err = b.applyDelta(data)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", h.Path, err)
		}
	}
	return nil
}

// fetch reads the stored file h names, through a local file at dst.
func (b *Backend) fetch(h state.FileHandle, dst string) ([]byte, error) {
	if err := b.opts.RestoreFiles.Fetch(h, dst, true); err != nil {
		return nil, err
	}
	defer os.Remove(dst)
	data, err := os.ReadFile(dst)
	if err != nil {
		return nil, fmt.Errorf("reading %s fetched from %s: %w", dst, h.Path, err)
	}
	return data, nil
}

// applyDelta applies a delta file to the restored entries: an entry
// replaces the key's payload, a delete removes it.
func (b *Backend) applyDelta(data []byte) error {
	r := wire.NewReader(data)
	if magic := r.Fixed(len(deltaMagic)); string(magic) != deltaMagic {
		return corrupt("bad delta magic %q, want %q", magic, deltaMagic)
	}
	if mp := r.Uvarint(); r.Err() == nil && mp != uint64(b.opts.MaxParallelism) {
		return corrupt("delta has max parallelism %d, backend %d", mp, b.opts.MaxParallelism)
	}
	n := r.Count(4)
	for s := 0; s < n && r.Err() == nil; s++ {
		if err := b.applyDeltaState(r); err != nil {
			return err
		}
	}
	if r.Err() != nil || r.Len() != 0 {
		return corrupt("delta: %v, %d trailing bytes", r.Err(), r.Len())
	}
	return nil
}

func (b *Backend) applyDeltaState(r *wire.Reader) error {
	name, kind, flags := string(r.Bytes()), state.Kind(r.Byte()), r.Byte()
	groups := r.Count(2)
	if r.Err() != nil {
		return nil // reported by applyDelta
	}
	if kind < state.KindValue || kind > state.KindAggregating || flags > 1 {
		return corrupt("delta: state %q: kind %d, flags %d", name, kind, flags)
	}
	raw, err := b.pendingState(name, kind, flags == 1)
	if err != nil {
		return err
	}
	for g := 0; g < groups && r.Err() == nil; g++ {
		if err := b.applyDeltaGroup(r, name, raw); err != nil {
			return err
		}
	}
	return nil
}

func (b *Backend) applyDeltaGroup(r *wire.Reader, name string, raw *rawState) error {
	kg, n := r.Uvarint(), r.Count(2)
	if r.Err() != nil {
		return nil
	}
	if kg >= uint64(b.opts.MaxParallelism) {
		return corrupt("delta: state %q: key group %d ≥ max parallelism %d", name, kg, b.opts.MaxParallelism)
	}
	own := b.opts.KeyGroupRange.Contains(int(kg))
	i := int(kg) - b.opts.KeyGroupRange.Start
	for e := 0; e < n && r.Err() == nil; e++ {
		kb, op := r.Bytes(), r.Byte()
		var p []byte
		var from uint64
		switch {
		case r.Err() != nil:
			return nil
		case op == 0:
			p = r.Bytes()
		case op == 2 && raw.kind == state.KindList && !raw.hasTTL:
			from, p = r.Uvarint(), r.Bytes()
		case op == 3 && raw.kind == state.KindMap && !raw.hasTTL:
			p = r.Bytes()
		case op != 1:
			return corrupt("delta: state %q (kind %d): op %d", name, raw.kind, op)
		}
		if !own || r.Err() != nil {
			continue
		}
		k, err := decodeKey(b.opts.KeyCodec, kb)
		if err != nil {
			return fmt.Errorf("state %q: key: %w", name, err)
		}
		m := &raw.maps[i]
		old, _ := m.get(k) // what ops 2 and 3 change
		switch op {
		case 1:
			m.del(k)
		case 2:
			if p, err = appendList(old, from, p); err != nil {
				return fmt.Errorf("delta: state %q, key group %d, key %s: %w", name, kg, keyed.KeyString(k), err)
			}
			m.set(k, p)
		case 3:
			if p, err = changeMap(old, p); err != nil {
				return fmt.Errorf("delta: state %q, key group %d, key %s: %w", name, kg, keyed.KeyString(k), err)
			}
			if p == nil {
				m.del(k)
			} else {
				m.set(k, p)
			}
		default:
			m.set(k, bytes.Clone(p))
		}
	}
	return nil
}

// changeMap returns the map payload (without TTL) of old with the user
// key changes of op 3 applied (see mapTable.encodeUKs): each user key set
// to its value, or removed; nil when none is left.
func changeMap(old []byte, changes []byte) ([]byte, error) {
	if old == nil {
		return nil, corrupt("changes to %d bytes of a map the chain holds none of", len(changes))
	}
	type kv struct{ k, v []byte }
	r := wire.NewReader(old)
	n := r.Count(2)
	entries := make([]kv, 0, n)
	at := make(map[string]int, n)
	for j := 0; j < n && r.Err() == nil; j++ {
		k, v := r.Bytes(), r.Bytes()
		at[string(k)] = len(entries)
		entries = append(entries, kv{k, v})
	}
	c := wire.NewReader(changes)
	m := c.Count(2)
	for j := 0; j < m && c.Err() == nil; j++ {
		k, set := c.Bytes(), c.Byte()
		var v []byte
		switch set {
		case 1:
			v = c.Bytes()
		case 0:
		default:
			return nil, corrupt("map change of a user key: byte %d", set)
		}
		if j, ok := at[string(k)]; ok {
			entries[j].v = v // nil: removed
			continue
		}
		if v != nil {
			at[string(k)] = len(entries)
			entries = append(entries, kv{k, v})
		}
	}
	if r.Err() != nil || r.Len() != 0 || c.Err() != nil || c.Len() != 0 {
		return nil, corrupt("map payload or its changes: %v %v, %d and %d bytes left", r.Err(), c.Err(), r.Len(), c.Len())
	}
	live := 0
	for _, e := range entries {
		if e.v != nil {
			live++
		}
	}
	if live == 0 {
		return nil, nil
	}
	out := wire.AppendUvarint(make([]byte, 0, len(old)+len(changes)), uint64(live))
	for _, e := range entries {
		if e.v != nil {
			out = wire.AppendBytes(wire.AppendBytes(out, e.k), e.v)
		}
	}
	return out, nil
}

// appendList returns the list payload of old (nil: no list) followed by
// the elements of tail, a list payload written after from elements.
func appendList(old []byte, from uint64, tail []byte) ([]byte, error) {
	var n uint64
	r := wire.NewReader(old)
	if old != nil {
		n = r.Uvarint()
	}
	t := wire.NewReader(tail)
	m := t.Uvarint()
	switch {
	case r.Err() != nil || t.Err() != nil:
		return nil, corrupt("list payload: %v %v", r.Err(), t.Err())
	case n != from:
		return nil, corrupt("appends to a list of %d elements, the chain holds %d", from, n)
	}
	out := wire.AppendUvarint(make([]byte, 0, len(old)+len(tail)), n+m)
	out = append(out, old[len(old)-r.Len():]...)
	return append(out, tail[len(tail)-t.Len():]...), nil
}
