package heap

import (
	"encoding/binary"
	"fmt"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
	"github.com/weirstream/weir/state/internal/wire"
)

// table is the backend's view of one registered keyed state, whatever its
// kind.
type table interface {
	spec() state.StateSpec
	// takeDirty returns the keys of each group changed since the last
	// snapshot (nil unless incremental), each with how (changes), and the
	// maps changed in some user keys only (groups.uks), and starts a new
	// record.
	takeDirty() ([]changes, []userKeys)
	// capture takes the synchronous part of a snapshot: every entry, or
	// for a delta only the entries of d's keys.
	capture(delta bool, d tableDelta) captured
	// forget drops the record of changed keys.
	forget()
	// keys returns the keys with a live entry at now.
	keys(now int64) []any
	// groupKeys returns every key of group index i, live or not.
	groupKeys(i int) []any
	// cleanup removes the parts of key k's entry in group i that expired
	// at now and returns how many it removed.
	cleanup(i int, k any, now int64) int
	// load decodes a restored state into the (empty) table.
	load(raw *rawState, now int64) error
	// estimate returns the estimated bytes of the table's entries
	// encoded (see Backend.EstimatedSize).
	estimate(keys state.Codec[any], sample, elems int) int64
}

// entryOps is what a state kind (value, list, map) adds to core. Entries of
// type E are never modified in place once stored, except as the kind's file
// explains.
type entryOps[E any] interface {
	// encode appends e's payload, leaving out parts expired at now; false
	// when nothing of e is live. It runs on the snapshot's goroutine.
	encode(buf []byte, e E, now int64) ([]byte, bool)
	// decode parses a payload; false when it is wholly expired at now.
	decode(p []byte, hasTS bool, now int64) (E, bool, error)
	// sweep returns e without its parts expired at now (a new entry when
	// some are), how many parts it dropped, and whether anything is left.
	sweep(e E, now int64) (E, int, bool)
}

// tailEncoder is an entryOps whose entries grow by appends (lists): a
// delta can hold only the elements appended (groups.touchAppend).
type tailEncoder[E any] interface {
	// encodeTail appends the payload of e's elements from index from on,
	// as encode appends all of them; false when e has fewer.
	encodeTail(buf []byte, e E, from int) ([]byte, bool)
}

// ukEncoder is an entryOps whose entries are maps (map state): a delta
// can hold only the user keys written or removed (groups.touchUK).
type ukEncoder interface {
	// encodeUKs appends the user key changes of a record: each one's
	// value, or its removal.
	encodeUKs(buf []byte, r *ukRecord) []byte
}

// detacher is an entryOps whose entries hold maps the owner writes in
// place between full captures (map state): a delta capture replaces each
// captured entry by what its delta reads, and returns, per group, the
// records of the maps whose delta holds some user keys' changes alone.
type detacher[E any] interface {
	detach(captured []keyMap[E], d tableDelta) []userKeys
}

// tableDelta is what a delta capture of one state holds (deltaKeys): the
// keys changed, per group, since the chain it will extend; of those, the
// maps changed in some user keys only (uks, the union of the captures'
// records); this capture's own records (own), which hold the changes;
// alone: the delta covers this capture only, and uks is own.
type tableDelta struct {
	keys     []changes
	uks, own []userKeys
	alone    bool
}

// core implements table for entries of type E.
type core[E any] struct {
	b    *Backend
	sp   state.StateSpec
	ttl  ttl
	data groups[E]
	ops  entryOps[E]
	// immutable: the codec declares its values never modified
	// (state.ImmutableType), so none is copied before it is handed out
	// (private).
	immutable bool
}

func newCore[E any](b *Backend, sp state.StateSpec) core[E] {
	return core[E]{b: b, sp: sp, ttl: keyed.NewTTL(sp.TTL), immutable: state.IsImmutableType(sp.Codec),
		data: newGroups[E](b.groupCount(), &b.mapVersion, b.inc != nil, b.inc != nil && b.captured)}
}

func (c *core[E]) spec() state.StateSpec { return c.sp }

// now reads the clock only for states with a TTL.
func (c *core[E]) now() int64 {
	if !c.ttl.Enabled() {
		return 0
	}
	return c.b.opts.Clock()
}

func (c *core[E]) takeDirty() ([]changes, []userKeys) {
	return c.data.takeDirty()
}

func (c *core[E]) capture(delta bool, d tableDelta) captured {
	out := &capturedGroups[E]{hdr: stateHeader{name: c.sp.Name, kind: c.sp.Kind, hasTTL: c.ttl.Enabled()}, encode: c.ops.encode}
	if t, ok := c.ops.(tailEncoder[E]); ok {
		out.tail = t.encodeTail
	}
	if u, ok := c.ops.(ukEncoder); ok {
		out.uks = u.encodeUKs
	}
	if delta {
		dt, ok := c.ops.(detacher[E])
		if !ok {
			out.lists = c.data.captureList(d.keys)
			return out
		}
		out.maps = c.data.captureKeys(d.keys)
		out.partial = dt.detach(out.maps, d)
	} else {
		out.maps = c.data.capture()
	}
	return out
}

func (c *core[E]) forget() { c.data.forget() }

func (c *core[E]) keys(now int64) []any {
	var ks []any
	for i := range c.data.maps {
		ks = append(ks, c.data.keys(i, func(e E) bool {
			_, _, live := c.ops.sweep(e, now)
			return live
		})...)
	}
	return ks
}

func (c *core[E]) groupKeys(i int) []any {
	return c.data.keys(i, func(E) bool { return true })
}

func (c *core[E]) cleanup(i int, k any, now int64) int {
	e, ok := c.data.get(i, k)
	if !ok {
		return 0
	}
	e, n, live := c.ops.sweep(e, now)
	switch {
	case n == 0:
	case live:
		c.data.put(i, k, e)
	default:
		c.data.del(i, k)
	}
	return n
}

// groupLoader is an entryOps whose decode needs to know the group of the
// entries it decodes (placedTable: each group's lists in chunks of their
// own).
type groupLoader interface{ loadingGroup(i int) }

func (c *core[E]) load(raw *rawState, now int64) error {
	gl, _ := c.ops.(groupLoader)
	for i, m := range raw.maps {
		if gl != nil {
			gl.loadingGroup(i)
		}
		for k, p := range m.all() {
			e, live, err := c.ops.decode(p, raw.hasTTL, now)
			if err != nil {
				return fmt.Errorf("restoring state %q, key %s: %w (did its codec change?)", c.sp.Name, keyed.KeyString(k), err)
			}
			if live {
				c.data.put(i, k, e)
			}
		}
	}
	return nil
}

// readTS reads an entry's timestamp, if the payload has one, and resolves
// it for a state with TTL t: a state that gained a TTL since the snapshot
// starts its entries' TTL now; a state without TTL keeps none.
func readTS(r *wire.Reader, hasTS bool, t ttl, now int64) int64 {
	var ts int64
	if hasTS {
		ts = r.Varint()
	}
	switch {
	case !t.Enabled():
		return 0
	case !hasTS:
		return now
	}
	return ts
}

// appendPrefixed appends c's encoding of v behind its uvarint length. It
// encodes in place (see prefixLength), so that it needs no scratch buffer
// (Write may run concurrently for two snapshots, so tables hold no shared
// buffers).
func appendPrefixed(buf []byte, c state.Codec[any], v any) []byte {
	start := len(buf)
	return prefixLength(c.Encode(buf, v), start)
}

// prefixLength puts the uvarint length of buf[start:] before it, shifting
// those bytes to make room.
func prefixLength(buf []byte, start int) []byte {
	n := len(buf) - start
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(n))
	buf = append(buf, hdr[:h]...)
	copy(buf[start+h:], buf[start:start+n])
	copy(buf[start:], hdr[:h])
	return buf
}

var (
	decodeAll = keyed.DecodeAll
	decodeKey = keyed.DecodeKey
)

var corrupt = keyed.Corrupt
