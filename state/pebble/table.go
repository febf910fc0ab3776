package pebble

import (
	"fmt"

	pebbledb "github.com/cockroachdb/pebble/v2"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
	"github.com/weirstream/weir/state/internal/wire"
)

// tbase is what every kind of table shares: the state and scratch buffers
// for the Pebble keys and values it builds.
type tbase struct {
	b    *Backend
	si   *stateInfo
	sp   state.StateSpec
	kbuf []byte // the current key's prefix (and user key)
	vbuf []byte
}

func newTBase(b *Backend, si *stateInfo, sp state.StateSpec) tbase {
	return tbase{b: b, si: si, sp: sp}
}

func (t *tbase) info() *stateInfo { return t.si }

// prefix returns the Pebble key prefix of the current key's entry. It is
// valid until the next call.
func (t *tbase) prefix() []byte {
	t.kbuf = appendKeyPrefix(t.kbuf[:0], t.b.kg, t.si.id, t.b.current())
	return t.kbuf
}

// now reads the clock only for states with a TTL.
func (t *tbase) now() int64 {
	if !t.si.ttl.Enabled() {
		return 0
	}
	return t.b.opts.Clock()
}

// stamped returns the stored form of an encoded value: [ts varint] enc.
func (t *tbase) stamped(ts int64, enc func([]byte) []byte) []byte {
	t.vbuf = t.vbuf[:0]
	if t.si.hasTS {
		t.vbuf = wire.AppendVarint(t.vbuf, ts)
	}
	t.vbuf = enc(t.vbuf)
	return t.vbuf
}

// lookupAt returns the live payload stored under Pebble key k (a value, or
// a map entry), removing it if it expired and restamping it if reads
// refresh the TTL.
func (t *tbase) lookupAt(k []byte) ([]byte, bool) {
	raw, ok := t.b.get(k)
	if !ok {
		return nil, false
	}
	ts, p, good := splitTS(raw, t.si.hasTS)
	if !good {
		panic(corrupt("pebble: state %q: stored timestamp", t.si.name))
	}
	if !t.si.ttl.Enabled() {
		return p, true
	}
	now := t.b.opts.Clock()
	switch {
	case t.si.ttl.Expired(ts, now):
		t.b.del(k)
		return nil, false
	case t.si.ttl.OnRead:
		t.b.set(k, t.stamped(now, func(buf []byte) []byte { return append(buf, p...) }))
	}
	return p, true
}

// decode decodes a stored encoding the backend wrote itself: failing is a
// bug or a damaged disk, never bad input, so it panics (and the subtask
// fails and restores).
func (t *tbase) decode(c state.Codec[any], p []byte) any {
	v, err := decodeAll(c, p)
	if err != nil {
		panic(fmt.Errorf("pebble: state %q: decoding a stored value: %w", t.si.name, err))
	}
	return v
}

// adopt makes the restored entries of si, if any, fit its registration
// with codecs sp and TTL t, as the heap backend's load does: every entry
// must decode, a state that gained a TTL since the snapshot starts its
// entries' TTL now, one that lost it drops their timestamps.
//
// Entries restored from an incremental checkpoint's files are not decoded
// (that would read the whole state at every restore, what the files spare):
// they were written by this backend, and only a change of TTL rewrites
// them. A changed codec then fails at the first read of an entry, not here.
func (b *Backend) adopt(si *stateInfo, sp state.StateSpec, t ttl) error {
	if !b.restored || si.stored && si.hasTS == t.Enabled() {
		si.hasTS = t.Enabled()
		return nil
	}
	var now int64
	if t.Enabled() {
		now = b.opts.Clock()
	}
	convert := si.hasTS != t.Enabled()
	w := newBatchWriter(b.db)
	var ferr error
	scanState(b.db, b.opts.KeyGroupRange, si, func(_ int, kb, prefix, uk, v []byte) bool {
		nv, err := reencode(si, sp, uk, v, t.Enabled(), now)
		if err != nil {
			k, _ := decodeKey(b.opts.KeyCodec, kb)
			ferr = fmt.Errorf("restoring state %q, key %s: %w (did its codec change?)", si.name, keyed.KeyString(k), err)
			return false
		}
		if convert {
			w.set(append(append([]byte(nil), prefix...), uk...), nv)
		}
		return true
	})
	if err := w.flush(); ferr == nil {
		ferr = err
	}
	if ferr == nil {
		si.hasTS = t.Enabled()
	}
	return ferr
}

// reencode checks that the stored value v (user key uk, for maps) of si
// decodes with sp's codecs, and returns it with a timestamp (now, when it
// had none) if toTS, without one otherwise.
func reencode(si *stateInfo, sp state.StateSpec, uk, v []byte, toTS bool, now int64) ([]byte, error) {
	restamp := func(buf []byte, ts int64, had bool) []byte {
		if !had {
			ts = now
		}
		if toTS {
			buf = wire.AppendVarint(buf, ts)
		}
		return buf
	}
	if si.kind == state.KindList {
		items, ok := parseItems(v, si.hasTS)
		if !ok {
			return nil, corrupt("list payload")
		}
		var out []byte
		for _, it := range items {
			if _, err := decodeAll(sp.Codec, it.enc); err != nil {
				return nil, err
			}
			out = wire.AppendBytes(restamp(out, it.ts, si.hasTS), it.enc)
		}
		return out, nil
	}
	if si.kind == state.KindMap {
		if _, err := decodeKey(sp.UserKeyCodec, uk); err != nil {
			return nil, err
		}
	}
	ts, p, ok := splitTS(v, si.hasTS)
	if !ok {
		return nil, corrupt("value timestamp")
	}
	if _, err := decodeAll(sp.Codec, p); err != nil {
		return nil, err
	}
	return append(restamp(nil, ts, si.hasTS), p...), nil
}

// batchWriter writes through a batch committed every few MiB, so that a
// large restore does not hold all of it in memory.
type batchWriter struct {
	db *pebbledb.DB
	b  *pebbledb.Batch
}

const batchLimit = 4 << 20

func newBatchWriter(db *pebbledb.DB) *batchWriter { return &batchWriter{db: db, b: db.NewBatch()} }

func (w *batchWriter) set(k, v []byte) error {
	if err := w.b.Set(k, v, nil); err != nil {
		return err
	}
	if w.b.Len() >= batchLimit {
		return w.flush()
	}
	return nil
}

func (w *batchWriter) flush() error {
	if w.b.Empty() {
		return nil
	}
	err := w.b.Commit(pebbledb.NoSync)
	_ = w.b.Close()
	w.b = w.db.NewBatch()
	return err
}

var (
	decodeAll = keyed.DecodeAll
	decodeKey = keyed.DecodeKey
)

var corrupt = keyed.Corrupt
