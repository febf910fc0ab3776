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
	// appendGroup appends the entries of group index i and returns how
	// many it appended.
	appendGroup(body []byte, i int, w *writer) ([]byte, int)
}

// capturedGroups is a captured state: the group maps as they were at
// Snapshot, which copy-on-write keeps unchanged.
type capturedGroups[E any] struct {
	hdr    stateHeader
	maps   []map[any]E
	encode func(buf []byte, e E, now int64) ([]byte, bool)
}

func (c *capturedGroups[E]) header() stateHeader { return c.hdr }

func (c *capturedGroups[E]) appendGroup(body []byte, i int, w *writer) ([]byte, int) {
	n := 0
	for k, e := range c.maps[i] {
		var live bool
		if w.payload, live = c.encode(w.payload[:0], e, w.now); !live {
			continue
		}
		w.key = w.keyCodec.Encode(w.key[:0], k)
		body = wire.AppendBytes(body, w.key)
		body = wire.AppendBytes(body, w.payload)
		n++
	}
	return body, n
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
}

// land takes the snapshot out of the count, once: after Write, or when the
// garbage collector frees a snapshot never written.
func (f *flight) land() {
	if f.landed.CompareAndSwap(false, true) {
		f.count.Add(-1)
	}
}

// writer holds the scratch buffers of one Write call.
type writer struct {
	keyCodec          state.Codec[any]
	now               int64
	key, payload, grp []byte
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

// groupCountRoom is the room appendState leaves for a state's number of
// key groups, which it knows only at the end: the uvarint of at most
// keyed.MaxMaxParallelism (2^15) takes 3 bytes.
const groupCountRoom = 3

// appendState appends state c: its header, then each key group with live
// entries, encoded into w.grp (a scratch buffer as large as the largest
// group) and copied into blob once.
func (w *writer) appendState(blob []byte, c captured, start int) []byte {
	h := c.header()
	blob = wire.AppendString(blob, h.name)
	blob = append(blob, byte(h.kind), boolByte(h.hasTTL))
	at := len(blob)
	blob = append(blob, make([]byte, groupCountRoom)...)
	groups := 0
	for i := range c.groupCount() {
		var n int
		if w.grp, n = c.appendGroup(w.grp[:0], i, w); n == 0 {
			continue
		}
		blob = grow(blob, 2*binary.MaxVarintLen64+len(w.grp))
		blob = wire.AppendUvarint(blob, uint64(start+i))
		blob = wire.AppendUvarint(blob, uint64(n))
		blob = append(blob, w.grp...)
		groups++
	}
	// Put the count in its room and close the gap it leaves, moving the
	// state's groups once (a few ms for 100 MB, against encoding them).
	var hdr [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(hdr[:], uint64(groups))
	copy(blob[at:], hdr[:n])
	copy(blob[at+n:], blob[at+groupCountRoom:])
	return blob[:len(blob)-(groupCountRoom-n)]
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
