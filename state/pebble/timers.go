package pebble

import (
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"runtime"

	pebbledb "github.com/cockroachdb/pebble/v2"

	"github.com/weirstream/weir/state"
)

// Timer queues (state.TimerQueues, Flink's RocksDB timer service) live in
// the database beside the keyed state, under state ids taken from the top
// of the id space (0xffff, 0xfffe, …; registered states stay below
// maxStates):
//
//	keyGroup(2 bytes BE) queueID(2 bytes BE) element
//
// so one key group stays one contiguous key range, timers included, and
// within it the elements are in their order: the head of a key group is
// its first key. The queue keeps the head of each non-empty key group in
// memory and a heap of those groups ordered by their heads; the least
// element of all is the head of the heap's top group. Adding a smaller
// element replaces a group's head; removing the head seeks to the group's
// next element, starting at the removed key so the seek does not walk the
// tombstones of the elements removed before it.

// maxStates bounds registered state ids below the timer queues' ids.
const maxStates = 0xff00

var _ state.TimerQueues = (*Backend)(nil)

// TimerQueue returns the queue named name, creating it on first use.
func (b *Backend) TimerQueue(name string) (state.TimerQueue, error) {
	if q, ok := b.queues[name]; ok {
		return q, nil
	}
	if len(b.queues) >= 0xffff-maxStates {
		return nil, fmt.Errorf("pebble: timer queue %q: a keyed backend holds at most %d timer queues", name, 0xffff-maxStates)
	}
	if b.queues == nil {
		b.queues = map[string]*timerQueue{}
	}
	q := &timerQueue{b: b, name: name, id: uint16(0xffff - len(b.queues))}
	b.queues[name] = q
	return q, nil
}

// timerQueue is one state.TimerQueue of a Backend.
type timerQueue struct {
	b      *Backend
	name   string
	id     uint16
	n      int
	loaded bool // n and the heads are known
	groups groupHeap
	kbuf   []byte
}

func (q *timerQueue) key(kg int, elem []byte) []byte {
	q.kbuf = append(appendGroupState(q.kbuf[:0], kg, q.id), elem...)
	return q.kbuf
}

// has reports whether the key is stored.
func (q *timerQueue) has(k []byte) bool {
	_, closer, err := q.b.db.Get(k)
	if errors.Is(err, pebbledb.ErrNotFound) {
		return false
	}
	if err != nil {
		panic(ioFailure("reading", err))
	}
	_ = closer.Close()
	return true
}

// Add inserts elem into key group kg.
func (q *timerQueue) Add(kg int, elem []byte) bool {
	q.checkGroup(kg)
	q.load()
	k := q.key(kg, elem)
	if q.has(k) {
		return false
	}
	q.b.set(k, nil)
	q.n++
	if h, ok := q.groups.head(kg); !ok || bytes.Compare(elem, h) < 0 {
		q.groups.set(kg, bytes.Clone(elem))
	}
	return true
}

// Remove deletes elem from key group kg.
func (q *timerQueue) Remove(kg int, elem []byte) bool {
	q.checkGroup(kg)
	q.load()
	k := q.key(kg, elem)
	if !q.has(k) {
		return false
	}
	q.b.del(k)
	q.n--
	if h, ok := q.groups.head(kg); ok && bytes.Equal(h, elem) {
		q.groups.set(kg, q.first(kg, elem))
	}
	return true
}

// Peek returns the least element.
func (q *timerQueue) Peek() (int, []byte, bool) {
	q.load()
	if len(q.groups.kgs) == 0 {
		return 0, nil, false
	}
	kg := q.groups.kgs[0]
	h, _ := q.groups.head(kg)
	return kg, h, true
}

// Len is the number of elements.
func (q *timerQueue) Len() int {
	q.load()
	return q.n
}

func (q *timerQueue) checkGroup(kg int) {
	if r := q.b.opts.KeyGroupRange; !r.Contains(kg) {
		panic(fmt.Sprintf("pebble: timer in key group %d, outside this subtask's range %v", kg, r))
	}
}

// load finds each key group's head and counts the elements, once: the
// database may hold timers the queue did not add (a restore of its files).
func (q *timerQueue) load() {
	if q.loaded {
		return
	}
	q.loaded = true
	r := q.b.opts.KeyGroupRange
	q.groups.init(r.Start, r.Len())
	for kg := r.Start; kg < r.Start+r.Len(); kg++ {
		lo := appendGroupState(nil, kg, q.id)
		scan(q.b.db, lo, succ(lo), func(k, _ []byte) bool {
			if q.n++; !q.groups.has(kg) {
				q.groups.set(kg, bytes.Clone(k[groupStateLen:]))
			}
			return true
		})
	}
}

// first returns a copy of the first element of key group kg at or after
// from, nil when there is none.
func (q *timerQueue) first(kg int, from []byte) []byte {
	lo := appendGroupState(nil, kg, q.id)
	hi := succ(lo)
	var out []byte
	scan(q.b.db, append(lo, from...), hi, func(k, _ []byte) bool {
		out = bytes.Clone(k[groupStateLen:])
		if out == nil {
			out = []byte{}
		}
		return false
	})
	return out
}

// Snapshot takes a Pebble snapshot of the queue.
func (q *timerQueue) Snapshot() state.QueueSnapshot {
	q.b.life.acquire()
	s := &queueSnapshot{id: q.id, rngStart: q.b.opts.KeyGroupRange.Start, rngLen: q.b.opts.KeyGroupRange.Len(),
		h: &snapHandle{snap: q.b.db.NewSnapshot(), life: q.b.life}}
	runtime.AddCleanup(s, (*snapHandle).release, s.h)
	return s
}

type queueSnapshot struct {
	id               uint16
	rngStart, rngLen int
	h                *snapHandle
}

// Range iterates the snapshot; it releases it.
func (s *queueSnapshot) Range(f func(kg int, elem []byte) bool) (err error) {
	defer s.h.release()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pebble: writing timer snapshot: %v", r)
		}
	}()
	for kg := s.rngStart; kg < s.rngStart+s.rngLen; kg++ {
		lo := appendGroupState(nil, kg, s.id)
		if !scan(s.h.snap, lo, succ(lo), func(k, _ []byte) bool { return f(kg, k[groupStateLen:]) }) {
			return nil
		}
	}
	return nil
}

// groupHeap is the key groups with a head, ordered by head, then key group.
type groupHeap struct {
	start int
	kgs   []int    // the heap
	pos   []int    // by kg-start: index in kgs, -1 when absent
	heads [][]byte // by kg-start
}

func (g *groupHeap) init(start, n int) {
	g.start, g.kgs = start, nil
	g.pos, g.heads = make([]int, n), make([][]byte, n)
	for i := range g.pos {
		g.pos[i] = -1
	}
}

func (g *groupHeap) has(kg int) bool { return g.pos[kg-g.start] >= 0 }

func (g *groupHeap) head(kg int) ([]byte, bool) {
	if !g.has(kg) {
		return nil, false
	}
	return g.heads[kg-g.start], true
}

// set makes h the head of kg; nil removes kg.
func (g *groupHeap) set(kg int, h []byte) {
	i := g.pos[kg-g.start]
	switch {
	case h == nil && i >= 0:
		heap.Remove(g, i)
		g.heads[kg-g.start] = nil
	case h == nil:
	case i >= 0:
		g.heads[kg-g.start] = h
		heap.Fix(g, i)
	default:
		g.heads[kg-g.start] = h
		heap.Push(g, kg)
	}
}

func (g *groupHeap) Len() int { return len(g.kgs) }
func (g *groupHeap) Less(i, j int) bool {
	a, b := g.kgs[i], g.kgs[j]
	if c := bytes.Compare(g.heads[a-g.start], g.heads[b-g.start]); c != 0 {
		return c < 0
	}
	return a < b
}
func (g *groupHeap) Swap(i, j int) {
	g.kgs[i], g.kgs[j] = g.kgs[j], g.kgs[i]
	g.pos[g.kgs[i]-g.start], g.pos[g.kgs[j]-g.start] = i, j
}
func (g *groupHeap) Push(x any) {
	kg := x.(int)
	g.pos[kg-g.start] = len(g.kgs)
	g.kgs = append(g.kgs, kg)
}
func (g *groupHeap) Pop() any {
	kg := g.kgs[len(g.kgs)-1]
	g.kgs = g.kgs[:len(g.kgs)-1]
	g.pos[kg-g.start] = -1
	return kg
}
