package heap

import (
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
func (s *snapshot) Write() (blob []byte, err error) {
	defer s.flight.land()
	defer func() {
		if r := recover(); r != nil {
			blob, err = nil, fmt.Errorf("heap: writing keyed state snapshot: %v", r)
		}
	}()
	w := &writer{keyCodec: s.keyCodec, now: s.now}
	blob = append(blob, blobMagic...)
	blob = wire.AppendUvarint(blob, uint64(s.maxParallelism))
	blob = wire.AppendUvarint(blob, uint64(len(s.states)))
	for _, c := range s.states {
		blob = w.appendState(blob, c, s.start)
	}
	return blob, nil
}

func (w *writer) appendState(blob []byte, c captured, start int) []byte {
	h := c.header()
	blob = wire.AppendString(blob, h.name)
	blob = append(blob, byte(h.kind), boolByte(h.hasTTL))
	var body []byte
	groups := 0
	for i := range c.groupCount() {
		var n int
		if w.grp, n = c.appendGroup(w.grp[:0], i, w); n == 0 {
			continue
		}
		body = wire.AppendUvarint(body, uint64(start+i))
		body = wire.AppendUvarint(body, uint64(n))
		body = append(body, w.grp...)
		groups++
	}
	blob = wire.AppendUvarint(blob, uint64(groups))
	return append(blob, body...)
}

func (c *capturedGroups[E]) groupCount() int { return len(c.maps) }

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
