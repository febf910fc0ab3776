package pebble

import (
	"fmt"
	"os"
	"runtime"
	"sync/atomic"

	pebbledb "github.com/cockroachdb/pebble/v2"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
	"github.com/weirstream/weir/state/internal/wire"
)

// snapshot is the asynchronous part of a keyed checkpoint: a Pebble
// snapshot (a sequence number: no copy) and the states as they were.
type snapshot struct {
	rng    keygroup.Range
	maxPar int
	now    int64
	states []stateInfo // copies, sorted by name
	h      *snapHandle
}

// snapHandle keeps the Pebble snapshot open, and the database with it,
// until the snapshot is written, or dropped unwritten (its checkpoint
// failed first) and garbage.
type snapHandle struct {
	snap *pebbledb.Snapshot
	life *lifetime
	dir  string // the local checkpoint of an incremental snapshot, removed with it
	done atomic.Bool
}

func (h *snapHandle) release() {
	if h.done.CompareAndSwap(false, true) {
		_ = h.snap.Close()
		if h.dir != "" {
			_ = os.RemoveAll(h.dir)
		}
		h.life.release()
	}
}

// Snapshot takes a Pebble snapshot of every state as of now (ms); it
// copies nothing. Entries expired at now are left out when it is written.
func (b *Backend) Snapshot(now int64) (state.Snapshot, error) {
	if b.closed {
		return nil, fmt.Errorf("pebble: snapshot of a closed state backend")
	}
	s := &snapshot{rng: b.opts.KeyGroupRange, maxPar: b.opts.MaxParallelism, now: now}
	for _, si := range b.sortedStates() {
		c := *si
		c.table = nil
		s.states = append(s.states, c)
	}
	b.life.acquire()
	s.h = &snapHandle{snap: b.db.NewSnapshot(), life: b.life}
	runtime.AddCleanup(s, (*snapHandle).release, s.h)
	if b.opts.DisableIncremental {
		return s, nil
	}
	local, err := b.checkpointLocal()
	if err != nil {
		s.h.release()
		return nil, err
	}
	s.h.dir = local.dir
	return &incrementalSnapshot{snapshot: s, local: local}, nil
}

// Write encodes the captured state in the heap backend's blob format,
// reading the Pebble snapshot. It is called once; it releases the Pebble
// snapshot.
func (s *snapshot) Write() (blob []byte, err error) {
	defer s.h.release()
	defer func() {
		if r := recover(); r != nil {
			blob, err = nil, fmt.Errorf("pebble: writing keyed state snapshot: %v", r)
		}
	}()
	blob = append(blob, keyed.Magic...) // the heap backend's format: see state/heap's package doc
	blob = wire.AppendUvarint(blob, uint64(s.maxPar))
	blob = wire.AppendUvarint(blob, uint64(len(s.states)))
	for i := range s.states {
		blob = s.appendState(blob, &s.states[i])
	}
	return blob, nil
}

func (s *snapshot) appendState(blob []byte, si *stateInfo) []byte {
	blob = wire.AppendString(blob, si.name)
	blob = append(blob, byte(si.kind), boolByte(si.hasTS))
	g := &groupWriter{si: si, now: s.now, kg: -1}
	scanState(s.h.snap, s.rng, si, func(kg int, kb, _, uk, v []byte) bool {
		g.add(kg, kb, uk, v)
		return true
	})
	g.endGroup()
	blob = wire.AppendUvarint(blob, uint64(g.groups))
	return append(blob, g.body...)
}

// groupWriter builds one state's groups from its entries in key order:
// group = keyGroup nEntries (key(len+bytes) payload(len+bytes))*.
type groupWriter struct {
	si     *stateInfo
	now    int64
	body   []byte
	groups int

	kg      int    // group being built, -1 before the first
	n       int    // its entries
	grp     []byte // its entries' bytes
	key     []byte // key of the map being built
	mapN    int    // its live entries
	mapBody []byte
	payload []byte
}

func (g *groupWriter) add(kg int, kb, uk, v []byte) {
	if kg != g.kg {
		g.endGroup()
		g.kg = kg
	}
	if g.si.kind != state.KindMap {
		if p, live := g.entryPayload(v); live {
			g.appendEntry(kb, p)
		}
		return
	}
	if g.key != nil && string(g.key) != string(kb) {
		g.endMap()
	}
	if g.key == nil {
		g.key = append(g.key[:0:0], kb...)
	}
	ts, p, _ := splitTS(v, g.si.hasTS)
	if g.si.ttl.Expired(ts, g.now) {
		return
	}
	if g.si.hasTS {
		g.mapBody = wire.AppendVarint(g.mapBody, ts)
	}
	g.mapBody = wire.AppendBytes(wire.AppendBytes(g.mapBody, uk), p)
	g.mapN++
}

// entryPayload returns the snapshot payload of a stored value or list, and
// whether anything of it is live.
func (g *groupWriter) entryPayload(v []byte) ([]byte, bool) {
	if g.si.kind != state.KindList {
		ts, _, _ := splitTS(v, g.si.hasTS)
		return v, !g.si.ttl.Expired(ts, g.now)
	}
	items, ok := parseItems(v, g.si.hasTS)
	if !ok {
		panic(corrupt("state %q: stored list", g.si.name))
	}
	live := 0
	g.payload = g.payload[:0]
	for _, it := range items {
		if !g.si.ttl.Expired(it.ts, g.now) {
			g.payload = appendItem(g.payload, g.si.hasTS, it.ts, it.enc)
			live++
		}
	}
	return append(wire.AppendUvarint(nil, uint64(live)), g.payload...), live > 0
}

func (g *groupWriter) appendEntry(kb, p []byte) {
	g.grp = wire.AppendBytes(wire.AppendBytes(g.grp, kb), p)
	g.n++
}

func (g *groupWriter) endMap() {
	if g.key != nil && g.mapN > 0 {
		g.appendEntry(g.key, append(wire.AppendUvarint(nil, uint64(g.mapN)), g.mapBody...))
	}
	g.key, g.mapN, g.mapBody = nil, 0, g.mapBody[:0]
}

func (g *groupWriter) endGroup() {
	g.endMap()
	if g.n > 0 {
		g.body = wire.AppendUvarint(g.body, uint64(g.kg))
		g.body = wire.AppendUvarint(g.body, uint64(g.n))
		g.body = append(g.body, g.grp...)
		g.groups++
	}
	g.n, g.grp = 0, g.grp[:0]
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
