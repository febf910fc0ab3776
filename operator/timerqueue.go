package operator

import (
	"bytes"
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
	// snapshot captures the timers now; the function it returns calls f
	// with each, once, on any goroutine.
	snapshot() func(f func(Timer)) error
}

// heapQueue keeps timers on the Go heap (Flink's HEAP timer service),
// in one bucket per time: a heap of the times with a bucket says which
// bucket is next, and a bucket is sorted only when it becomes next, once.
// A window operator's timers mostly share a few times (every key's window
// ends at once), so firing costs a sort per time and a map lookup per
// timer, not a heap removal over every timer with a key comparison at each
// level. Removing a timer that is not next marks it deleted (a ghost) and
// leaves it in its bucket until its turn or a compaction; adding it again
// revives it in place.
type heapQueue struct {
	codec   state.Codec[any]
	times   timeHeap
	buckets map[event.Timestamp]*timerBucket
	// reg holds every timer in a bucket: registered, or removed (a ghost).
	reg    timerRegistry
	n      int // registered timers
	ghosts int
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
}

func newHeapQueue(codec state.Codec[any]) *heapQueue {
	return &heapQueue{codec: codec, buckets: map[event.Timestamp]*timerBucket{},
		reg: timerRegistry{byString: map[stringTimerID]bool{}, byAny: map[timerID]bool{}}}
}

func idOf(t Timer) timerID { return timerID{t.Domain, t.Timestamp, t.Key, t.Namespace} }

// timerRegistry maps the timers of one domain to whether they are
// registered (true) or ghosts (false). Timers of string keys (every SQL
// operator's) go to a map whose key hashes without the interface's
// dynamic type hash, which took 70 % of a lookup.
type timerRegistry struct {
	byString map[stringTimerID]bool
	byAny    map[timerID]bool
}

type stringTimerID struct {
	ts      event.Timestamp
	key, ns string
}

func (r *timerRegistry) get(t Timer) (live, ok bool) {
	if k, isString := t.Key.(string); isString {
		live, ok = r.byString[stringTimerID{t.Timestamp, k, t.Namespace}]
		return live, ok
	}
	live, ok = r.byAny[idOf(t)]
	return live, ok
}

func (r *timerRegistry) set(t Timer, live bool) {
	if k, isString := t.Key.(string); isString {
		r.byString[stringTimerID{t.Timestamp, k, t.Namespace}] = live
		return
	}
	r.byAny[idOf(t)] = live
}

func (r *timerRegistry) del(t Timer) {
	if k, isString := t.Key.(string); isString {
		delete(r.byString, stringTimerID{t.Timestamp, k, t.Namespace})
		return
	}
	delete(r.byAny, idOf(t))
}

// insert registers t and reports whether the registry did not hold it:
// one map operation, for a registry without ghosts (a ghost would come
// back registered, uncounted).
func (r *timerRegistry) insert(t Timer) bool {
	n := r.len()
	r.set(t, true)
	return r.len() > n
}

func (r *timerRegistry) len() int { return len(r.byString) + len(r.byAny) }

func (r *timerRegistry) live(t Timer) bool {
	live, _ := r.get(t)
	return live
}

func (q *heapQueue) add(t Timer) bool {
	if q.ghosts == 0 { // one map operation: a timer there is registered
		if !q.reg.insert(t) {
			return false
		}
		q.bucket(t.Timestamp).push(t)
		q.n++
		return true
	}
	live, ok := q.reg.get(t)
	switch {
	case live:
		return false
	case ok: // a ghost: it still has its place in its bucket
		q.ghosts--
	default:
		q.bucket(t.Timestamp).push(t)
	}
	q.reg.set(t, true)
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

func (q *heapQueue) remove(t Timer) bool {
	if !q.reg.live(t) {
		return false
	}
	q.reg.set(t, false)
	q.n--
	q.ghosts++
	if q.ghosts > compactGhosts && q.ghosts > q.n {
		q.compact()
	}
	return true
}

// pop removes the first timer, which peek has just returned.
func (q *heapQueue) pop(t Timer) {
	q.buckets[t.Timestamp].take(q.codec)
	q.reg.del(t)
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
		delete(q.buckets, ts) // hasLive dropped its ghosts
		heap.Pop(&q.times)
	}
	return 0, false
}

// hasLive reports whether the bucket holds a registered timer. It drops
// the ghosts it meets first, so that asking again costs nothing more.
func (b *timerBucket) hasLive(q *heapQueue) bool {
	if q.ghosts == 0 { // every timer in a bucket is registered
		return b.next < len(b.ts) || len(b.late.ts) > 0
	}
	if b.sorted {
		for {
			t, ok := b.head(q.codec)
			if !ok || q.reg.live(t) {
				return ok
			}
			b.take(q.codec)
			q.reg.del(t)
			q.ghosts--
		}
	}
	// Unsorted (nothing taken: next is 0): order is free, a ghost is
	// swapped out.
	for len(b.ts) > 0 {
		t := b.ts[0]
		if q.reg.live(t) {
			return true
		}
		last := len(b.ts) - 1
		b.ts[0], b.ts[last] = b.ts[last], Timer{}
		b.ts = b.ts[:last]
		q.reg.del(t)
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
		slices.SortFunc(b.ts, func(x, y Timer) int { return timerCompare(x, y, q.codec) })
		b.sorted = true
	}
	b.hasLive(q) // drops the ghosts now at the head
	t, _ := b.head(q.codec)
	return t, true
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
// their time (a timeout moved on every access) do not pile up.
func (q *heapQueue) compact() {
	keep := func(t Timer) bool {
		if q.reg.live(t) {
			return true
		}
		q.reg.del(t)
		return false
	}
	q.times = q.times[:0]
	for ts, b := range q.buckets {
		b.ts = slices.DeleteFunc(b.ts[b.next:], func(t Timer) bool { return !keep(t) })
		b.next = 0
		b.late.ts = slices.DeleteFunc(b.late.ts, func(t Timer) bool { return !keep(t) })
		heap.Init(&b.late)
		if len(b.ts)+len(b.late.ts) == 0 {
			delete(q.buckets, ts)
			continue
		}
		q.times = append(q.times, ts)
	}
	heap.Init(&q.times)
	q.ghosts = 0
}

func (q *heapQueue) len() int { return q.n }

// snapshot copies the registered timers now (the owner goes on changing
// the buckets).
func (q *heapQueue) snapshot() func(f func(Timer)) error {
	all := make([]Timer, 0, q.n)
	times := slices.Sorted(maps.Keys(q.buckets))
	for _, ts := range times {
		b := q.buckets[ts]
		for _, part := range [][]Timer{b.ts[b.next:], b.late.ts} {
			for _, t := range part {
				if q.reg.live(t) {
					all = append(all, t)
				}
			}
		}
	}
	return func(f func(Timer)) error {
		for _, t := range all {
			f(t)
		}
		return nil
	}
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

func (q *storeQueue) snapshot() func(f func(Timer)) error {
	s := q.q.Snapshot()
	return func(f func(Timer)) error {
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
	}
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
