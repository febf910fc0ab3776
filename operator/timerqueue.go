package operator

import (
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/state"
)

// Timers fire in one order whatever holds them: by time, key group, key
// (its text, keyText), namespace, and — for distinct keys of equal text —
// the key codec's encoding. The heap queue compares timers in that order;
// a backend's queue (state.TimerQueues) stores each timer as an element
// whose bytes sort in it (encodeElem).

// timerQueue holds the timers of one time domain.
type timerQueue interface {
	// add inserts t; it reports whether t was not there yet.
	add(t Timer) bool
	// remove deletes t (its time, key and namespace); it reports whether
	// it was there.
	remove(t Timer) bool
	// nextTime returns the first timer's time (cheaper than peek).
	nextTime() (event.Timestamp, bool)
	// peek returns the first timer.
	peek() (Timer, bool)
	// pop removes t, which peek has just returned.
	pop(t Timer)
	len() int
	// snapshot captures the timers now, for a writer on any goroutine.
	snapshot() capturedQueue
}

// heapQueue keeps timers on the Go heap (Flink's HEAP timer service),
// in one bucket per time: a heap of the times with a bucket says which
// bucket is next, and a bucket is sorted only when it becomes next, once.
// A window operator's timers mostly share a few times (every key's window
// ends at once), so firing costs a sort per time, not a heap removal over
// every timer with a key comparison at each level.
//
// Each bucket finds its own timers (to keep them unique): a small one by a
// scan, a large one by a registry map. Firing a timer does not touch the
// registry: in a sorted bucket every timer before the head has fired, so an
// entry for one is stale, and the registry goes whole with its bucket —
// q5's end of input fires millions of timers, and a delete each was a
// quarter of the queue's cost. Removing a timer from a large bucket marks
// it deleted (a ghost) and leaves it in place until its turn or a
// compaction; adding it again revives it in place. A small bucket removes
// it outright.
type heapQueue struct {
	codec   state.Codec[any]
	times   timeHeap
	buckets map[event.Timestamp]*timerBucket
	n       int // registered timers
	ghosts  int
}

// timerBucket is the timers of one time. Until it is the next bucket its
// timers are in order of registration; the first peek at it sorts them
// (sorted), and timers added to it after that go to late, a heap, so that
// a timer registering another at its own time costs log n, not a sort.
type timerBucket struct {
	ts     []Timer
	next   int // ts[:next] have fired
	sorted bool
	late   timerHeap
	// reg holds the bucket's timers once it has more than smallBucket:
	// registered (true) or ghosts (false), and in a sorted bucket stale
	// entries of fired ones.
	reg *timerRegistry
	// enc is the encoding of the bucket's first timers that the last
	// snapshot wrote, pend where the writer of the newest leaves its,
	// and gen counts the changes that drop them (see timerenc.go).
	enc  *timerEncoding
	pend *encodedBack
	gen  uint64
}

// smallBucket is the number of timers a bucket finds by a scan (a
// variable for tests).
var smallBucket = 8

func newHeapQueue(codec state.Codec[any]) *heapQueue {
	return &heapQueue{codec: codec, buckets: map[event.Timestamp]*timerBucket{}}
}

// timerRegistry maps the timers of one bucket (one time) to whether they
// are registered (true) or ghosts (false). Timers of string keys (every
// SQL operator's) go to a map whose key hashes without the interface's
// dynamic type hash, which took 70 % of a lookup.
type timerRegistry struct {
	byString map[stringTimerID]bool
	byAny    map[timerID]bool
}

type stringTimerID struct{ key, ns string }

func newTimerRegistry() *timerRegistry {
	return &timerRegistry{byString: map[stringTimerID]bool{}, byAny: map[timerID]bool{}}
}

func (r *timerRegistry) get(t Timer) (live, ok bool) {
	if k, isString := t.Key.(string); isString {
		live, ok = r.byString[stringTimerID{k, t.Namespace}]
		return live, ok
	}
	live, ok = r.byAny[timerID{t.Key, t.Namespace}]
	return live, ok
}

func (r *timerRegistry) set(t Timer, live bool) {
	if k, isString := t.Key.(string); isString {
		r.byString[stringTimerID{k, t.Namespace}] = live
		return
	}
	r.byAny[timerID{t.Key, t.Namespace}] = live
}

func (r *timerRegistry) del(t Timer) {
	if k, isString := t.Key.(string); isString {
		delete(r.byString, stringTimerID{k, t.Namespace})
		return
	}
	delete(r.byAny, timerID{t.Key, t.Namespace})
}

// insert registers t and reports whether the registry did not hold it:
// one map operation, for a registry without ghosts or stale entries.
func (r *timerRegistry) insert(t Timer) bool {
	n := r.len()
	r.set(t, true)
	return r.len() > n
}

func (r *timerRegistry) len() int { return len(r.byString) + len(r.byAny) }

func (q *heapQueue) add(t Timer) bool {
	b := q.bucket(t.Timestamp)
	switch {
	case b.reg == nil:
		if b.index(t) >= 0 {
			return false
		}
		b.push(t)
		if b.pending() > smallBucket {
			b.indexAll()
		}
	case q.ghosts == 0 && !b.sorted: // one map operation: a timer there is registered
		if !b.reg.insert(t) {
			return false
		}
		b.push(t)
	default:
		live, ok := b.lookup(t, q.codec)
		switch {
		case live:
			return false
		case ok: // a ghost: it still has its place in the bucket
			q.ghosts--
			b.invalidate()
		default:
			b.push(t)
		}
		b.reg.set(t, true)
	}
	q.n++
	return true
}

// bucket returns the bucket of time ts, making it if need be.
func (q *heapQueue) bucket(ts event.Timestamp) *timerBucket {
	b := q.buckets[ts]
	if b == nil {
		b = &timerBucket{late: timerHeap{codec: q.codec}}
		q.buckets[ts] = b
		heap.Push(&q.times, ts)
	}
	return b
}

func (b *timerBucket) push(t Timer) {
	if b.sorted {
		heap.Push(&b.late, t)
		return
	}
	b.ts = append(b.ts, t)
}

// pending is the number of timers in the bucket not fired yet, ghosts
// included.
func (b *timerBucket) pending() int { return len(b.ts) - b.next + len(b.late.ts) }

// index finds t among the pending timers of a small bucket: its index in
// ts, or len(ts) + its index in late, or -1.
func (b *timerBucket) index(t Timer) int {
	for i := b.next; i < len(b.ts); i++ {
		if sameTimer(b.ts[i], t) {
			return i
		}
	}
	for i, u := range b.late.ts {
		if sameTimer(u, t) {
			return len(b.ts) + i
		}
	}
	return -1
}

// sameTimer compares two timers of one bucket (one domain and time).
func sameTimer(a, b Timer) bool {
	return a.KeyGroup == b.KeyGroup && a.Namespace == b.Namespace && a.Key == b.Key
}

// indexAll gives a small bucket, whose timers are all registered, its
// registry.
func (b *timerBucket) indexAll() {
	b.reg = newTimerRegistry()
	for _, part := range [][]Timer{b.ts[b.next:], b.late.ts} {
		for _, t := range part {
			b.reg.set(t, true)
		}
	}
}

// lookup is what the registry of a large bucket says of t, leaving out a
// stale entry: a timer of a sorted bucket ordered before its head has fired.
func (b *timerBucket) lookup(t Timer, codec state.Codec[any]) (live, ok bool) {
	live, ok = b.reg.get(t)
	if ok && b.sorted {
		if h, pending := b.head(codec); !pending || timerCompare(t, h, codec) < 0 {
			return false, false
		}
	}
	return live, ok
}

func (q *heapQueue) remove(t Timer) bool {
	b := q.buckets[t.Timestamp]
	if b == nil {
		return false
	}
	if b.reg == nil {
		i := b.index(t)
		if i < 0 {
			return false
		}
		b.drop(i)
		q.n--
		return true
	}
	if live, _ := b.lookup(t, q.codec); !live {
		return false
	}
	b.reg.set(t, false)
	b.invalidate()
	q.n--
	q.ghosts++
	if q.ghosts > compactGhosts && q.ghosts > q.n {
		q.compact()
	}
	return true
}

// drop removes the pending timer at index i (as index returns it) from a
// small bucket, keeping the order of a sorted one.
func (b *timerBucket) drop(i int) {
	b.invalidate()
	switch {
	case i >= len(b.ts):
		heap.Remove(&b.late, i-len(b.ts))
	case b.sorted:
		b.ts = slices.Delete(b.ts, i, i+1)
	default: // unsorted: nothing has fired, order is free
		last := len(b.ts) - 1
		b.ts[i], b.ts[last] = b.ts[last], Timer{}
		b.ts = b.ts[:last]
	}
}

// pop removes the first timer, which peek has just returned.
func (q *heapQueue) pop(t Timer) {
	q.buckets[t.Timestamp].take(q.codec)
	q.n--
}

// nextTime returns the time of the first registered timer, dropping the
// buckets left with ghosts only. It sorts nothing: a bucket is sorted when
// it is due (peek), not when the watermark merely looks at it, so the
// timers registered until then are appended, not pushed on its late heap.
func (q *heapQueue) nextTime() (event.Timestamp, bool) {
	for len(q.times) > 0 {
		ts := q.times[0]
		if q.buckets[ts].hasLive(q) {
			return ts, true
		}
		delete(q.buckets, ts) // with its registry; hasLive dropped its ghosts
		heap.Pop(&q.times)
	}
	return 0, false
}

// hasLive reports whether the bucket holds a registered timer. It drops
// the ghosts it meets first, so that asking again costs nothing more.
func (b *timerBucket) hasLive(q *heapQueue) bool {
	if q.ghosts == 0 || b.reg == nil { // every pending timer is registered
		return b.pending() > 0
	}
	if b.sorted {
		for {
			t, ok := b.head(q.codec)
			if !ok {
				return false
			}
			if live, _ := b.reg.get(t); live { // the head is pending: not stale
				return true
			}
			b.take(q.codec)
			b.reg.del(t)
			q.ghosts--
		}
	}
	// Unsorted (nothing taken: next is 0): order is free, a ghost is
	// swapped out.
	for len(b.ts) > 0 {
		t := b.ts[0]
		if live, _ := b.reg.get(t); live {
			return true
		}
		b.drop(0)
		b.reg.del(t)
		q.ghosts--
	}
	return false
}

// peek returns the first registered timer, sorting its bucket if need be.
func (q *heapQueue) peek() (Timer, bool) {
	ts, ok := q.nextTime()
	if !ok {
		return Timer{}, false
	}
	b := q.buckets[ts]
	if !b.sorted {
		b.ts = sortBucket(b.ts, q.codec)
		b.sorted = true
		b.invalidate() // a sorted bucket's snapshots copy it: let its encoding go
	}
	b.hasLive(q) // drops the ghosts now at the head
	t, _ := b.head(q.codec)
	return t, true
}

// sortByRecords is the bucket size from which sortBucket sorts records
// (a variable for tests).
var sortByRecords = 256

// timerRecord is what sortBucket sorts of a timer: its key group, the
// first 16 bytes of its key's text as two big-endian integers (zeros
// after the text's end, so that a shorter text sorts first, as it does
// whole), and its index in the bucket.
type timerRecord struct {
	hi, lo uint64
	kg     int32
	i      int32
}

// sortBucket returns a bucket's timers, all of one time, in firing order
// (timerCompare). Comparing two timers reads both keys' bytes, which lie
// wherever the keys were allocated: in a bucket of every key's window end
// most comparisons waited on memory (Nexmark q8's end of input: 3 % of a
// 10 M-event run). So a large bucket reads each key once, into a record,
// sorts the records, and compares whole timers only where two records
// tie (texts alike in their first 16 bytes, or equal).
func sortBucket(ts []Timer, codec state.Codec[any]) []Timer {
	if len(ts) < sortByRecords {
		slices.SortFunc(ts, func(x, y Timer) int { return timerCompare(x, y, codec) })
		return ts
	}
	recs := make([]timerRecord, len(ts))
	for i, t := range ts {
		k := keyText(t.Key)
		recs[i] = timerRecord{hi: textWord(k, 0), lo: textWord(k, 8), kg: int32(t.KeyGroup), i: int32(i)}
	}
	slices.SortFunc(recs, func(a, b timerRecord) int {
		switch {
		case a.kg != b.kg:
			return cmp.Compare(a.kg, b.kg)
		case a.hi != b.hi:
			return cmp.Compare(a.hi, b.hi)
		case a.lo != b.lo:
			return cmp.Compare(a.lo, b.lo)
		}
		return timerCompare(ts[a.i], ts[b.i], codec)
	})
	out := make([]Timer, len(ts))
	for j, r := range recs {
		out[j] = ts[r.i]
	}
	return out
}

// textWord is the 8 bytes of s from off as a big-endian integer, zeros
// past s's end.
func textWord(s string, off int) uint64 {
	var b [8]byte
	if off < len(s) {
		copy(b[:], s[off:])
	}
	return binary.BigEndian.Uint64(b[:])
}

// head is the bucket's first timer of those not taken, ghosts included.
func (b *timerBucket) head(codec state.Codec[any]) (Timer, bool) {
	switch {
	case b.next == len(b.ts) && len(b.late.ts) == 0:
		return Timer{}, false
	case b.next == len(b.ts):
		return b.late.ts[0], true
	case len(b.late.ts) == 0 || timerCompare(b.ts[b.next], b.late.ts[0], codec) < 0:
		return b.ts[b.next], true
	}
	return b.late.ts[0], true
}

// take drops the bucket's head.
func (b *timerBucket) take(codec state.Codec[any]) {
	if b.next < len(b.ts) && (len(b.late.ts) == 0 || timerCompare(b.ts[b.next], b.late.ts[0], codec) < 0) {
		b.ts[b.next] = Timer{} // let the key go
		b.next++
		return
	}
	heap.Pop(&b.late)
}

// compactGhosts is the number of ghosts below which the queue does not
// compact (a variable for tests).
var compactGhosts = 1024

// compact drops every ghost, so that timers registered and removed before
// their time (a timeout moved on every access) do not pile up. A sorted
// bucket's registry keeps its stale entries (they go with the bucket).
func (q *heapQueue) compact() {
	q.times = q.times[:0]
	for ts, b := range q.buckets {
		if b.reg != nil {
			b.invalidate()
			keep := func(t Timer) bool {
				if live, _ := b.reg.get(t); live {
					return true
				}
				b.reg.del(t)
				return false
			}
			b.ts = slices.DeleteFunc(b.ts[b.next:], func(t Timer) bool { return !keep(t) })
			b.next = 0
			b.late.ts = slices.DeleteFunc(b.late.ts, func(t Timer) bool { return !keep(t) })
			heap.Init(&b.late)
		}
		if b.pending() == 0 {
			delete(q.buckets, ts)
			continue
		}
		q.times = append(q.times, ts)
	}
	heap.Init(&q.times)
	q.ghosts = 0
}

func (q *heapQueue) len() int { return q.n }

// registered counts the registry entries of every bucket (for tests).
func (q *heapQueue) registered() int {
	n := 0
	for _, b := range q.buckets {
		if b.reg != nil {
			n += b.reg.len()
		}
	}
	return n
}

// snapshot captures the registered timers now (the owner goes on
// changing the buckets), a piece per bucket in time order: the bucket's
// kept encoding (see timerEncoding) and a copy of the timers after it.
func (q *heapQueue) snapshot() capturedQueue {
	times := slices.Sorted(maps.Keys(q.buckets))
	pieces := make([]timerPiece, 0, len(times))
	for _, ts := range times {
		pieces = append(pieces, q.buckets[ts].capture(q))
	}
	return capturedQueue{pieces: pieces}
}

// capture is the bucket's piece of a snapshot. A sorted bucket (being
// fired) is copied whole; an unsorted one gives its kept encoding, if
// any, and a copy of the timers added after it, with a place for the
// writer to leave their encoding for the next snapshot.
func (b *timerBucket) capture(q *heapQueue) timerPiece {
	if b.sorted {
		return timerPiece{ts: q.liveOf(b, q.liveOf(b, nil, b.ts[b.next:]), b.late.ts)}
	}
	b.adopt()
	var from int
	var enc timerEncoding
	if b.enc != nil {
		enc, from = *b.enc, b.enc.upTo
	}
	p := timerPiece{enc: enc, ts: q.liveOf(b, nil, b.ts[from:])}
	if b.enc == nil || len(p.ts) > 0 {
		p.back = &encodedBack{gen: b.gen, base: enc, upTo: len(b.ts)}
		b.pend = p.back
	}
	return p
}

// liveOf appends to out the registered timers of part, a part of b.
func (q *heapQueue) liveOf(b *timerBucket, out, part []Timer) []Timer {
	if q.ghosts == 0 || b.reg == nil {
		return append(out, part...)
	}
	for _, t := range part {
		if live, _ := b.reg.get(t); live {
			out = append(out, t)
		}
	}
	return out
}

// timeHeap is a min-heap of times.
type timeHeap []event.Timestamp

func (h timeHeap) Len() int           { return len(h) }
func (h timeHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h timeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timeHeap) Push(x any)        { *h = append(*h, x.(event.Timestamp)) }
func (h *timeHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// timerHeap orders the timers of one time by timerCompare.
type timerHeap struct {
	ts    []Timer
	codec state.Codec[any]
}

func (h *timerHeap) Len() int           { return len(h.ts) }
func (h *timerHeap) Less(i, j int) bool { return timerCompare(h.ts[i], h.ts[j], h.codec) < 0 }
func (h *timerHeap) Swap(i, j int)      { h.ts[i], h.ts[j] = h.ts[j], h.ts[i] }
func (h *timerHeap) Push(x any)         { h.ts = append(h.ts, x.(Timer)) }
func (h *timerHeap) Pop() any {
	t := h.ts[len(h.ts)-1]
	h.ts = h.ts[:len(h.ts)-1]
	return t
}

// timerCompare orders timers for firing (see the top of this file).
func timerCompare(a, b Timer, codec state.Codec[any]) int {
	switch {
	case a.Timestamp != b.Timestamp:
		return cmpInt(a.Timestamp, b.Timestamp)
	case a.KeyGroup != b.KeyGroup:
		return cmpInt(int64(a.KeyGroup), int64(b.KeyGroup))
	}
	if c := compareStrings(keyText(a.Key), keyText(b.Key)); c != 0 {
		return c
	}
	if c := compareStrings(a.Namespace, b.Namespace); c != 0 || a.Key == b.Key {
		return c
	}
	return bytes.Compare(codec.Encode(nil, a.Key), codec.Encode(nil, b.Key))
}

func cmpInt(a, b int64) int {
	if a < b {
		return -1
	}
	return 1
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// keyText is fmt.Sprint(k) without formatting a string key (the common
// case: SQL operators key by strings), which made ties at one timestamp
// — every key's window ending at once — dominate the heap's cost.
func keyText(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	return fmt.Sprint(k)
}

// storeQueue keeps timers in the keyed backend's state.TimerQueue, each as
// the element encodeElem makes.
type storeQueue struct {
	q      state.TimerQueue
	domain TimeDomain
	codec  state.Codec[any]
	buf    []byte
}

func (q *storeQueue) add(t Timer) bool {
	q.buf = encodeElem(q.buf[:0], t, q.codec)
	return q.q.Add(t.KeyGroup, q.buf)
}

func (q *storeQueue) remove(t Timer) bool {
	q.buf = encodeElem(q.buf[:0], t, q.codec)
	return q.q.Remove(t.KeyGroup, q.buf)
}

func (q *storeQueue) pop(t Timer) { q.remove(t) }

func (q *storeQueue) nextTime() (event.Timestamp, bool) {
	_, elem, ok := q.q.Peek()
	if ok && len(elem) < 8 {
		t, _ := q.peek() // reports the corrupt element
		return t.Timestamp, true
	}
	if !ok {
		return 0, false
	}
	return event.Timestamp(binary.BigEndian.Uint64(elem) ^ 1<<63), true // see encodeElem
}

func (q *storeQueue) peek() (Timer, bool) {
	kg, elem, ok := q.q.Peek()
	if !ok {
		return Timer{}, false
	}
	t, err := decodeElem(elem, q.domain, q.codec)
	if err != nil {
		panic(fmt.Errorf("operator: timer stored in key group %d: %w", kg, err))
	}
	return t, true
}

func (q *storeQueue) len() int { return q.q.Len() }

func (q *storeQueue) snapshot() capturedQueue {
	s := q.q.Snapshot()
	return capturedQueue{each: func(f func(Timer)) error {
		var derr error
		err := s.Range(func(kg int, elem []byte) bool {
			t, err := decodeElem(elem, q.domain, q.codec)
			if err != nil {
				derr = fmt.Errorf("operator: timer stored in key group %d: %w", kg, err)
				return false
			}
			f(t)
			return true
		})
		if err != nil {
			return err
		}
		return derr
	}}
}

// encodeElem appends t's element: its bytes sort as timerCompare orders
// timers. time (8 bytes, big-endian, sign bit flipped) | key group (2
// bytes) | escaped keyText | escaped namespace | key codec encoding. An
// escaped string has each 0x00 as 0x00 0xff and ends with 0x00 0x01, so a
// shorter string sorts before a longer one it starts.
func encodeElem(buf []byte, t Timer, codec state.Codec[any]) []byte {
	buf = binary.BigEndian.AppendUint64(buf, uint64(t.Timestamp)^1<<63)
	buf = binary.BigEndian.AppendUint16(buf, uint16(t.KeyGroup))
	buf = appendEscaped(buf, keyText(t.Key))
	buf = appendEscaped(buf, t.Namespace)
	return codec.Encode(buf, t.Key)
}

func appendEscaped(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if buf = append(buf, s[i]); s[i] == 0 {
			buf = append(buf, 0xff)
		}
	}
	return append(buf, 0, 1)
}

// readEscaped reads an escaped string from b; it returns the rest.
func readEscaped(b []byte) (string, []byte, bool) {
	var out []byte
	for i := 0; i+1 < len(b); i++ {
		if b[i] != 0 {
			out = append(out, b[i])
			continue
		}
		switch b[i+1] {
		case 1:
			return string(out), b[i+2:], true
		case 0xff:
			out = append(out, 0)
			i++
		default:
			return "", nil, false
		}
	}
	return "", nil, false
}

func decodeElem(b []byte, domain TimeDomain, codec state.Codec[any]) (Timer, error) {
	if len(b) < 10 {
		return Timer{}, errTimerCorrupt
	}
	t := Timer{Domain: domain, Timestamp: event.Timestamp(binary.BigEndian.Uint64(b) ^ 1<<63),
		KeyGroup: int(binary.BigEndian.Uint16(b[8:]))}
	_, rest, ok := readEscaped(b[10:])
	if !ok {
		return Timer{}, errTimerCorrupt
	}
	if t.Namespace, rest, ok = readEscaped(rest); !ok {
		return Timer{}, errTimerCorrupt
	}
	key, rest, err := codec.Decode(rest)
	if err != nil {
		return Timer{}, fmt.Errorf("%w: key: %v", errTimerCorrupt, err)
	}
	if len(rest) != 0 {
		return Timer{}, fmt.Errorf("%w: %d bytes after the key", errTimerCorrupt, len(rest))
	}
	t.Key = key
	return t, nil
}
