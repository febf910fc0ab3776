package heap

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
	"github.com/weirstream/weir/state/internal/wire"
)

// blobMagic starts every keyed snapshot blob.
const blobMagic = keyed.Magic

// stateHeader is what a snapshot records about a state besides its entries.
type stateHeader struct {
	name   string
	kind   state.Kind
	hasTTL bool // entries carry timestamps
}

// captured is one state's part of a snapshot.
type captured interface {
	header() stateHeader
	// groupCount is the number of key groups captured.
	groupCount() int
	// groupLen is the number of entries of group index i, live or not.
	groupLen(i int) int
	// appendGroup appends the entries of group index i and returns how
	// many it appended.
	appendGroup(body []byte, i int, w *writer) ([]byte, int)
	// appendKeys appends the delta entries of keys in group index i
	// (incremental.go), each as it changed (changes).
	appendKeys(body []byte, i int, keys changes, w *writer) []byte
}

// capturedGroups is a captured state: the group maps as they were at
// Snapshot, which copy-on-write keeps unchanged.
type capturedGroups[E any] struct {
	hdr  stateHeader
	maps []keyMap[E]
	// lists replaces maps in a delta capture of a table without user
	// keys (captureList).
	lists  []capturedList[E]
	encode func(buf []byte, e E, now int64) ([]byte, bool)
	// tail, for a list, encodes the elements from an index on.
	tail func(buf []byte, e E, from int) ([]byte, bool)
	// uks, for a map, encodes the changes of some user keys.
	uks func(buf []byte, r *ukRecord) []byte
	// partial, for a map's delta capture, holds per group the records of
	// the maps changed in some user keys only: their deltas write those
	// changes (mapTable.detach).
	partial []userKeys
}

func (c *capturedGroups[E]) header() stateHeader { return c.hdr }

func (c *capturedGroups[E]) groupLen(i int) int { return c.maps[i].len() }

func (c *capturedGroups[E]) appendGroup(body []byte, i int, w *writer) ([]byte, int) {
	n := 0
	for key, e := range c.maps[i].encoded(w) {
		start := len(body)
		body = wire.AppendBytes(body, key)
		var live bool
		if body, live = appendEntry(body, c.encode, e, w.now); !live {
			body = body[:start]
			continue
		}
		n++
	}
	return body, n
}

// appendEntry appends entry e's payload behind its uvarint length, or
// nothing and false when nothing of e is live at now. It encodes in place
// (see prefixLength), not into a scratch buffer copied in.
func appendEntry[E any](buf []byte, encode func([]byte, E, int64) ([]byte, bool), e E, now int64) ([]byte, bool) {
	start := len(buf)
	buf, live := encode(buf, e, now)
	if !live {
		return buf[:start], false
	}
	return prefixLength(buf, start), true
}

// snapshot is the asynchronous part of a keyed checkpoint.
type snapshot struct {
	maxParallelism int
	start          int // key group of group index 0
	keyCodec       state.Codec[any]
	now            int64
	states         []captured // sorted by name
	flight         *flight
	// size is the backend's record of its last blob's size: Write sizes
	// its buffer from it and stores its own (see Write).
	size *atomic.Int64
}

// flight is a snapshot's place in its backend's count of snapshots in
// flight (Backend.inFlight).
type flight struct {
	count  *atomic.Int64
	landed atomic.Bool
	// records are the user-key records the snapshot's capture took, which
	// landing releases (see ukRecord).
	records map[string][]userKeys
}

// land takes the snapshot out of the count, once: after Write, or when the
// garbage collector frees a snapshot never written. It releases the
// elements of the capture's records.
func (f *flight) land() {
	if !f.landed.CompareAndSwap(false, true) {
		return
	}
	f.count.Add(-1)
	for _, groups := range f.records {
		for _, uks := range groups {
			for r := range uks.values() {
				r.release()
			}
		}
	}
}

// writer holds the scratch buffer and state of one Write call.
type writer struct {
	keyCodec state.Codec[any]
	now      int64
	key      []byte
	sk       shortKey // shortView's
	wk       wordKey  // wordView's
	// lastGroup is the size of the last group appended, which sizes the
	// room made before the next (key groups hash alike, so sizes are).
	lastGroup int
}

// Write encodes the captured state (see the package doc for the format).
// A codec that panics makes Write return an error instead of crashing the
// goroutine that runs it. Write is called once: when it returns, reads of
// the live state stop copying the values it captured, so a second Write
// could see them modified.
//
// The blob is built in one buffer sized from the backend's last blob (a
// state changes little between checkpoints), which grows by doubling when
// that is not enough: appending to a buffer of hundreds of MB let Go's
// append grow it by 1.25× at a time, and the copies and their garbage were
// most of a snapshot's cost (Nexmark q20 at 2 M events, issue 16).
func (s *snapshot) Write() (blob []byte, err error) {
	defer s.flight.land()
	defer func() {
		if r := recover(); r != nil {
			blob, err = nil, fmt.Errorf("heap: writing keyed state snapshot: %v", r)
		}
	}()
	w := &writer{keyCodec: s.keyCodec, now: s.now}
	if last := s.size.Load(); last > 0 {
		blob = make([]byte, 0, last+last/8)
	}
	blob = append(blob, blobMagic...)
	blob = wire.AppendUvarint(blob, uint64(s.maxParallelism))
	blob = wire.AppendUvarint(blob, uint64(len(s.states)))
	for _, c := range s.states {
		blob = w.appendState(blob, c, s.start)
	}
	s.size.Store(int64(len(blob)))
	return blob, nil
}

// appendState appends state c: its header, then each key group with live
// entries, encoded in place in blob. The number of those groups comes
// first but is known only at the end: it goes into room left for the
// largest it can be (every captured group), which takes as many bytes
// unless groups are empty, so the groups rarely move.
func (w *writer) appendState(blob []byte, c captured, start int) []byte {
	h := c.header()
	blob = wire.AppendString(blob, h.name)
	blob = append(blob, byte(h.kind), boolByte(h.hasTTL))
	at := len(blob)
	room := int(uvarintLen(c.groupCount()))
	blob = append(blob, make([]byte, room)...)
	groups := 0
	for i := range c.groupCount() {
		var n int
		if blob, n = w.appendGroup(blob, c, start+i, i); n > 0 {
			groups++
		}
	}
	return closeRoom(blob, at, room, groups)
}

// appendGroup appends group index i of c as key group kg: kg, the number
// of live entries and the entries, or nothing when none is live. The
// entries are encoded in place behind room for the largest count they can
// have (all live), which is their count unless some expired.
func (w *writer) appendGroup(blob []byte, c captured, kg, i int) ([]byte, int) {
	all := c.groupLen(i)
	if all == 0 {
		return blob, 0
	}
	blob = grow(blob, 2*w.lastGroup+2*binary.MaxVarintLen64)
	mark := len(blob)
	blob = wire.AppendUvarint(blob, uint64(kg))
	at := len(blob)
	room := int(uvarintLen(all))
	blob = append(blob, make([]byte, room)...)
	blob, n := c.appendGroup(blob, i, w)
	if n == 0 {
		return blob[:mark], 0
	}
	blob = closeRoom(blob, at, room, n)
	w.lastGroup = len(blob) - mark
	return blob, n
}

// closeRoom puts the uvarint of n, at most room bytes long, into the room
// of that many bytes at blob[at:] and closes the gap it leaves (if any) by
// moving what follows.
func closeRoom(blob []byte, at, room, n int) []byte {
	var hdr [binary.MaxVarintLen64]byte
	h := binary.PutUvarint(hdr[:], uint64(n))
	copy(blob[at:], hdr[:h])
	if h == room {
		return blob
	}
	copy(blob[at+h:], blob[at+room:])
	return blob[:len(blob)-(room-h)]
}

// grow returns b with room for n more bytes, at least doubling its
// capacity when it must reallocate, so that building a blob copies it
// about once in all, not a few times over as append's 1.25× does.
func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b
	}
	nb := make([]byte, len(b), max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}

func (c *capturedGroups[E]) groupCount() int { return len(c.maps) }

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
