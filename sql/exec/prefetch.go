package exec

import (
	"unsafe"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

// batchPrefetch is what an operator's Prefetch (operator.Prefetcher) took of
// a batch: each row's key, which processing the rows then reads instead
// of encoding it again, and the lookups for the state (state.Ahead).
type batchPrefetch struct {
	input  int    // the batch's
	rows   []*any // each row's first field: which row a key is of
	keys   []string
	next   int   // the row processing reaches next
	groups []int // each row's key group
	as     []state.Ahead
	ends   []int  // where each lookup's user key ends in buf
	buf    []byte // the user keys, one after another
}

// begin starts a batch of input's.
func (a *batchPrefetch) begin(input int) {
	clear(a.rows)
	clear(a.keys)
	a.input, a.rows, a.keys, a.next = input, a.rows[:0], a.keys[:0], 0
}

// addRow records row fields' key k ("" with no fields: not kept).
func (a *batchPrefetch) addRow(fields []any, k string) {
	var p *any
	if len(fields) > 0 {
		p = &fields[0]
	}
	a.rows, a.keys = append(a.rows, p), append(a.keys, k)
}

// key returns the key Prefetch took of the row of fields, if it is the
// next row of the batch and of its input; else key(fields). After the
// batch's last row it lets go of the batch.
func (a *batchPrefetch) key(input int, fields []any, key KeyFunc) string {
	for a.next < len(a.rows) && a.rows[a.next] == nil {
		a.next++ // a row processing keys not
	}
	k, taken := "", false
	if j := a.next; j < len(a.rows) && input == a.input {
		a.next++
		if len(fields) > 0 && a.rows[j] == &fields[0] {
			k, taken = a.keys[j], true
		}
		if a.next == len(a.rows) {
			a.begin(a.input)
		}
	}
	if !taken {
		k = key(fields)
	}
	return k
}

// end lets go of the lookups' keys.
func (a *batchPrefetch) end() { clear(a.as) }

// lookups starts the lookups of one state.
func (a *batchPrefetch) lookups() {
	clear(a.as)
	a.as, a.ends, a.buf = a.as[:0], a.ends[:0], a.buf[:0]
}

// add records the lookup of the user key appended to a.buf since the
// last add, under key k.
func (a *batchPrefetch) add(k string, kg int) {
	a.as = append(a.as, state.Ahead{Key: k, KeyGroup: kg})
	a.ends = append(a.ends, len(a.buf))
}

// done returns the lookups, each user key a view of a.buf: valid until
// the next lookups or end.
func (a *batchPrefetch) done() []state.Ahead {
	start := 0
	for i, end := range a.ends {
		a.as[i].UK = ""
		if end > start {
			a.as[i].UK = unsafe.String(&a.buf[start], end-start)
		}
		start = end
	}
	return a.as
}

// Prefetch prefetches the DISTINCT sets of an insert-only input that the
// rows of rs will look up (operator.Prefetcher). Nexmark q16's sets hold
// millions of bidders and auctions; each row's lookups waited for memory
// one after another.
func (g *GroupAggregate) Prefetch(rs []event.Record, input int) {
	if g.partial || !g.prefetches() {
		return
	}
	a := &g.ahead
	a.begin(input)
	kgs := a.groups[:0]
	for _, r := range rs {
		row, err := rowOf(r.Value)
		if err != nil || checkWidth("GroupAggregate", row.Fields, g.opts.GroupKeys...) != nil {
			a.addRow(nil, "")
			kgs = append(kgs, 0)
			continue
		}
		k := g.key(row.Fields)
		a.addRow(row.Fields, k)
		kgs = append(kgs, keygroup.ForHash(keygroup.HashString(k), g.Ctx.MaxParallelism))
	}
	a.groups = kgs
	for gi, dg := range g.agg.groups {
		s := g.groups[gi]
		a.lookups()
		for i, r := range rs {
			row, _ := rowOf(r.Value)
			if a.rows[i] == nil || dg.arg >= len(row.Fields) {
				continue
			}
			v := widen(row.Fields[dg.arg])
			if v == nil {
				continue
			}
			a.buf = appendValue(append(a.buf, s.prefix...), v, true)
			a.add(a.keys[i], kgs[i])
		}
		state.Prefetch(s.bits, a.done())
	}
	a.end()
}

// prefetches reports whether the aggregate has sets to prefetch: every
// DISTINCT group's over an insert-only input, in tables that prefetch
// (the heap's).
func (g *GroupAggregate) prefetches() bool {
	if len(g.groups) == 0 {
		return false
	}
	for _, s := range g.groups {
		if s == nil || s.bits == nil || !state.CanPrefetch(s.bits) {
			return false
		}
	}
	return true
}
