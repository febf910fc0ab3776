package heap

import (
	"slices"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// listTable stores ListState: each key's list is a []elem.
//
// Why appending in place is safe while a snapshot reads the list: the
// snapshot holds the slice header it captured, of length n. An append
// writes only at index n and beyond (when the backing array has room),
// which the snapshot never reads. Every other change — Update, TTL expiry,
// a refresh on read, copies of elements a snapshot in flight may encode —
// builds a new slice, so stored elements are never overwritten.
type listTable struct{ core[[]elem] }

var (
	_ state.ListTable    = (*listTable)(nil)
	_ state.ListAppender = (*listTable)(nil)
)

func newListTable(b *Backend, sp state.StateSpec) *listTable {
	t := &listTable{newCore[[]elem](b, sp)}
	t.ops = t
	return t
}

func (t *listTable) Get() []any {
	out := t.AppendTo(nil)
	if len(out) == 0 {
		return nil
	}
	return out
}

// AppendTo appends the current key's list to out (state.ListAppender).
func (t *listTable) AppendTo(out []any) []any {
	k, i := t.b.current()
	items, ok := t.data.get(i, k)
	if !ok {
		return out
	}
	if t.ttl.Enabled() {
		items = t.refresh(i, k, items, t.b.opts.Clock())
	}
	if len(items) == 0 {
		return out
	}
	out = slices.Grow(out, len(items))
	var fresh []elem // items with copies, if any (see private)
	for j, e := range items {
		if v, copied := t.private(e.v, e.ver); copied {
			if fresh == nil {
				fresh = slices.Clone(items)
			}
			fresh[j] = elem{v, e.ts, t.b.version}
			e.v = v
		}
		out = append(out, e.v)
	}
	if fresh != nil {
		t.data.put(i, k, fresh)
	}
	return out
}

// refresh drops expired elements and, if reads refresh the TTL, restamps
// the rest, storing the result as a new slice.
func (t *listTable) refresh(i int, k any, items []elem, now int64) []elem {
	items, n, live := t.sweep(items, now)
	switch {
	case !live:
		t.data.del(i, k)
		return nil
	case t.ttl.OnRead:
		fresh := make([]elem, len(items))
		for j, e := range items {
			fresh[j] = elem{e.v, now, e.ver}
		}
		items = fresh
	case n == 0:
		return items
	}
	t.data.put(i, k, items)
	return items
}

func (t *listTable) Add(v any) {
	k, i := t.b.current()
	items, _ := t.data.get(i, k)
	n := len(items)
	items = append(items, elem{v, t.now(), t.b.version})
	if n > 0 && items[n-1].ver == t.b.version && !t.ttl.Enabled() {
		// An element stored since the last capture: the key's change is
		// recorded already (every write at this version was), so only
		// the slice is stored — a join's hot key gains rows all second.
		t.data.writable(i).set(k, items)
		return
	}
	t.store(i, k, items, n)
}

// store stores items, the list of k after appends to its first n
// elements: a delta then holds only the appended ones, unless the state
// has a TTL (its snapshots leave expired elements out, so an older
// snapshot's list is no prefix).
func (t *listTable) store(i int, k any, items []elem, n int) {
	if t.ttl.Enabled() {
		t.data.put(i, k, items)
		return
	}
	t.data.putAppend(i, k, items, n)
}

func (t *listTable) AddAll(vs []any) {
	if len(vs) == 0 {
		return
	}
	k, i := t.b.current()
	items, _ := t.data.get(i, k)
	n, now := len(items), t.now()
	for _, v := range vs {
		items = append(items, elem{v, now, t.b.version})
	}
	t.store(i, k, items, n)
}

func (t *listTable) Update(vs []any) {
	if len(vs) == 0 {
		t.Delete()
		return
	}
	k, i := t.b.current()
	now := t.now()
	items := make([]elem, len(vs))
	for j, v := range vs {
		items[j] = elem{v, now, t.b.version}
	}
	t.data.put(i, k, items)
}

func (t *listTable) Delete() {
	k, i := t.b.current()
	t.data.del(i, k)
}

func (t *listTable) encode(buf []byte, items []elem, now int64) ([]byte, bool) {
	live := 0
	for _, e := range items {
		if !t.ttl.Expired(e.ts, now) {
			live++
		}
	}
	if live == 0 {
		return buf, false
	}
	buf = wire.AppendUvarint(buf, uint64(live))
	for _, e := range items {
		if t.ttl.Expired(e.ts, now) {
			continue
		}
		if t.ttl.Enabled() {
			buf = wire.AppendVarint(buf, e.ts)
		}
		buf = appendPrefixed(buf, t.sp.Codec, e.v)
	}
	return buf, true
}

// encodeTail appends the payload of items[from:], as encode does (a list
// without TTL).
func (t *listTable) encodeTail(buf []byte, items []elem, from int) ([]byte, bool) {
	if from > len(items) || t.ttl.Enabled() {
		return buf, false
	}
	buf = wire.AppendUvarint(buf, uint64(len(items)-from))
	for _, e := range items[from:] {
		buf = appendPrefixed(buf, t.sp.Codec, e.v)
	}
	return buf, true
}

func (t *listTable) decode(p []byte, hasTS bool, now int64) ([]elem, bool, error) {
	r := wire.NewReader(p)
	n := r.Count(1)
	items := make([]elem, 0, n)
	for j := 0; j < n && r.Err() == nil; j++ {
		ts := readTS(r, hasTS, t.ttl, now)
		b := r.Bytes()
		if r.Err() != nil {
			break
		}
		v, err := decodeAll(t.sp.Codec, b)
		if err != nil {
			return nil, false, err
		}
		if !t.ttl.Expired(ts, now) {
			items = append(items, elem{v, ts, t.b.loadedVersion()})
		}
	}
	if r.Err() != nil || r.Len() != 0 {
		return nil, false, corrupt("list payload: %v, %d bytes left", r.Err(), r.Len())
	}
	return items, len(items) > 0, nil
}

func (t *listTable) sweep(items []elem, now int64) ([]elem, int, bool) {
	n := 0
	for _, e := range items {
		if t.ttl.Expired(e.ts, now) {
			n++
		}
	}
	if n == 0 {
		return items, 0, len(items) > 0
	}
	live := make([]elem, 0, len(items)-n)
	for _, e := range items {
		if !t.ttl.Expired(e.ts, now) {
			live = append(live, e)
		}
	}
	return live, n, len(live) > 0
}
