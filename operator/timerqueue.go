package operator

import (
	"bytes"
	"container/heap"
	"encoding/binary"
	"fmt"

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
	// peek returns the first timer.
	peek() (Timer, bool)
	len() int
	// snapshot captures the timers now; the function it returns calls f
	// with each, once, on any goroutine.
	snapshot() func(f func(Timer)) error
}

// heapQueue keeps timers on the Go heap (Flink's HEAP timer service).
type heapQueue struct {
	h          timerHeap
	registered map[timerID]bool
}

func newHeapQueue(codec state.Codec[any]) *heapQueue {
	return &heapQueue{h: timerHeap{codec: codec}, registered: map[timerID]bool{}}
}

func idOf(t Timer) timerID { return timerID{t.Domain, t.Timestamp, t.Key, t.Namespace} }

func (q *heapQueue) add(t Timer) bool {
	if q.registered[idOf(t)] {
		return false
	}
	q.registered[idOf(t)] = true
	heap.Push(&q.h, t)
	return true
}

func (q *heapQueue) remove(t Timer) bool {
	if !q.registered[idOf(t)] {
		return false
	}
	delete(q.registered, idOf(t))
	for i, o := range q.h.ts {
		if o.Timestamp == t.Timestamp && o.Namespace == t.Namespace && o.Key == t.Key {
			heap.Remove(&q.h, i)
			break
		}
	}
	return true
}

func (q *heapQueue) peek() (Timer, bool) {
	if len(q.h.ts) == 0 {
		return Timer{}, false
	}
	return q.h.ts[0], true
}

func (q *heapQueue) len() int { return len(q.h.ts) }

func (q *heapQueue) snapshot() func(f func(Timer)) error {
	all := append([]Timer(nil), q.h.ts...)
	return func(f func(Timer)) error {
		for _, t := range all {
			f(t)
		}
		return nil
	}
}

// timerHeap orders timers by timerCompare.
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
