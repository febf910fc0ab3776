package exec

import (
	"fmt"
	"math/rand"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/operator"
)

// Rows of these tests: probe [key, time ms, id], versioned [key, time ms,
// rate]; both keyed by field 0.
func temporalOpts(typ JoinType) TemporalJoinOptions {
	return TemporalJoinOptions{Type: typ, LeftKeys: []int{0}, RightKeys: []int{0}, LeftTime: 1, RightTime: 1,
		LeftArity: 3, RightArity: 3}
}

func temporalStage(opts TemporalJoinOptions) []newStage {
	return []newStage{keyedStage(func() (operator.Operator, error) { return NewTemporalJoin(opts) })}
}

func probeRow(kind event.RowKind, k, ts, id int64) step {
	return step{input: 1, row: event.Row{Kind: kind, Fields: []any{k, ts, id}}}
}

func versionRow(kind event.RowKind, k, ts, rate int64) step {
	return step{input: 2, row: event.Row{Kind: kind, Fields: []any{k, ts, rate}}}
}

// TestTemporalJoinVersions walks through the rules by hand: the version
// at or before a row's time, a delete ending validity, a version arriving
// out of order, the probe row's kind on its output, and a late probe row
// that finds its version dropped.
func TestTemporalJoinVersions(t *testing.T) {
	steps := []step{
		versionRow(event.Insert, 1, 10, 100),
		versionRow(event.UpdateBefore, 1, 10, 100), // ignored
		versionRow(event.UpdateAfter, 1, 30, 300),
		probeRow(event.Insert, 1, 20, 1),          // sees 100
		probeRow(event.Insert, 1, 35, 2),          // sees 300, or what comes before 35 out of order
		probeRow(event.Insert, 1, 5, 3),           // before any version: no match
		versionRow(event.UpdateAfter, 1, 33, 330), // out of order: valid from 33, so row 2 sees it
		versionRow(event.Delete, 1, 40, 330),      // no version from 40
		probeRow(event.Insert, 1, 45, 4),          // deleted: no match
		probeRow(event.Delete, 1, 34, 2),          // a retraction of the probe side keeps its kind
		probeRow(event.Insert, 2, 50, 5),          // key without versions
		step{wm: 36},                              // fires rows 1, 3, 2 and the -D of 2; drops 100, 300
		probeRow(event.Insert, 1, 25, 6),          // late: 100 was dropped at 36, so no match
		probeRow(event.Insert, 1, 36, 7),          // at the watermark: sees 330
		step{wm: 100},
	}
	for _, typ := range []JoinType{InnerJoin, LeftJoin} {
		lines, _ := runSteps(t, temporalStage(temporalOpts(typ)), steps, nil)
		want := []string{
			"+I[1, 20, 1, 1, 10, 100] @20",
			"+I[1, 35, 2, 1, 33, 330] @35",
			"+I[1, 5, 3, NULL, NULL, NULL] @5",
			"-D[1, 34, 2, 1, 33, 330] @34",
			"watermark 36",
			"+I[1, 45, 4, NULL, NULL, NULL] @45",
			"+I[1, 25, 6, NULL, NULL, NULL] @25",
			"+I[1, 36, 7, 1, 33, 330] @36",
			"+I[2, 50, 5, NULL, NULL, NULL] @50",
			"watermark 100",
		}
		if typ == InnerJoin {
			want = slices.DeleteFunc(want, func(s string) bool { return strings.Contains(s, "NULL") })
		}
		// Keys fire in timer order: compare each key's rows in order.
		if g, w := perKeyLines(lines), perKeyLines(want); g != w {
			t.Errorf("%s: got\n%s\nwant\n%s", typ, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
}

// perKeyLines groups printed rows by their first field, in order, and
// keeps watermark lines apart, in order.
func perKeyLines(lines []string) string {
	by := map[string][]string{}
	for _, l := range lines {
		k := "watermarks"
		if i := strings.Index(l, "["); i >= 0 {
			k = strings.SplitN(l[i+1:], ",", 2)[0]
		}
		by[k] = append(by[k], l)
	}
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s: %s\n", k, strings.Join(by[k], " | "))
	}
	return b.String()
}

// temporalReference is the join computed directly from its definition,
// with no state backend and no timers: at every rise of the watermark,
// each key's waiting probe rows at or before it join, in arrival order,
// the latest version at or before their time, and then the versions the
// watermark has passed a successor of are forgotten.
type temporalReference struct {
	typ      JoinType
	cond     func(l, r []any) bool
	wm       int64
	waiting  map[int64][]event.Row
	versions map[int64]map[int64]event.Row // key → time → change
	out      []string
}

func newTemporalReference(typ JoinType, cond func(l, r []any) bool) *temporalReference {
	return &temporalReference{typ: typ, cond: cond, wm: event.MinWatermark,
		waiting: map[int64][]event.Row{}, versions: map[int64]map[int64]event.Row{}}
}

func (ref *temporalReference) step(s step) {
	switch {
	case s.input == 1:
		k := s.row.Fields[0].(int64)
		ref.waiting[k] = append(ref.waiting[k], s.row)
	case s.input == 2 && s.row.Kind != event.UpdateBefore:
		k := s.row.Fields[0].(int64)
		if ref.versions[k] == nil {
			ref.versions[k] = map[int64]event.Row{}
		}
		ref.versions[k][s.row.Fields[1].(int64)] = s.row
	case s.input == 0 && s.wm > ref.wm:
		ref.wm = s.wm
		for k := range ref.waiting {
			ref.fire(k)
		}
		for k := range ref.versions {
			ref.forget(k)
		}
	}
}

// valid returns key k's change with the largest time at or before ts.
func (ref *temporalReference) valid(k, ts int64) (event.Row, bool) {
	best, found := event.Row{}, false
	for vt, v := range ref.versions[k] {
		if vt <= ts && (!found || vt > best.Fields[1].(int64)) {
			best, found = v, true
		}
	}
	return best, found
}

func (ref *temporalReference) fire(k int64) {
	var still []event.Row
	for _, p := range ref.waiting[k] {
		ts := p.Fields[1].(int64)
		if ts > ref.wm {
			still = append(still, p)
			continue
		}
		v, ok := ref.valid(k, ts)
		line := ""
		switch {
		case ok && v.Kind.IsAccumulate() && (ref.cond == nil || ref.cond(p.Fields, v.Fields)):
			line = formatRow(event.Row{Kind: p.Kind, Fields: concat(p.Fields, v.Fields)})
		case ref.typ == LeftJoin:
			line = formatRow(event.Row{Kind: p.Kind, Fields: concat(p.Fields, nulls(3))})
		}
		if line != "" {
			ref.out = append(ref.out, fmt.Sprintf("%s @%d", line, ts))
		}
	}
	ref.waiting[k] = still
}

func (ref *temporalReference) forget(k int64) {
	v, ok := ref.valid(k, ref.wm)
	if !ok {
		return
	}
	vt := v.Fields[1].(int64)
	for t := range ref.versions[k] {
		if t < vt {
			delete(ref.versions[k], t)
		}
	}
}

// temporalSteps is a random run: probe rows (some late, some
// retractions), changes of the versioned side in any order, and rising
// watermarks.
func temporalSteps(rng *rand.Rand, n int) []step {
	var steps []step
	wm, maxTS := int64(0), int64(0)
	kinds := []event.RowKind{event.Insert, event.UpdateBefore, event.UpdateAfter, event.UpdateAfter, event.Delete}
	for i := range n {
		ts := max(0, maxTS+int64(rng.Intn(30)-20)) // out of order, late when at or below wm
		maxTS = max(maxTS, ts)
		k := int64(rng.Intn(4))
		switch r := rng.Intn(10); {
		case r < 2:
			wm = max(wm, maxTS-int64(rng.Intn(15)))
			steps = append(steps, step{wm: wm})
		case r < 6:
			kind := event.Insert
			if rng.Intn(8) == 0 {
				kind = event.Delete
			}
			steps = append(steps, probeRow(kind, k, ts, int64(i)))
		default:
			steps = append(steps, versionRow(kinds[rng.Intn(len(kinds))], k, ts, int64(100+i)))
		}
	}
	return append(steps, step{wm: event.MaxWatermark})
}

func temporalExpected(typ JoinType, cond func(l, r []any) bool, steps []step) []string {
	ref := newTemporalReference(typ, cond)
	for _, s := range steps {
		ref.step(s)
	}
	return ref.out
}

// rowLines drops the watermark lines.
func rowLines(lines []string) []string {
	return slices.DeleteFunc(slices.Clone(lines), func(s string) bool { return strings.HasPrefix(s, "watermark") })
}

// TestTemporalJoinDifferential checks random runs against the reference,
// key by key in order, on the heap backend, through restores from
// checkpoints at random points, and on Pebble.
func TestTemporalJoinDifferential(t *testing.T) {
	rateAbove := func(l, r []any) bool { return r[2].(int64)%3 != 0 }
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		typ := []JoinType{InnerJoin, LeftJoin}[seed%2]
		var cond func(l, r []any) bool
		opts := temporalOpts(typ)
		if seed%3 == 0 {
			cond = rateAbove
			opts.Condition = func(l, r []any) (bool, error) { return cond(l, r), nil }
		}
		steps := temporalSteps(rng, 300)
		want := temporalExpected(typ, cond, steps)
		mk := temporalStage(opts)
		lines, _ := runSteps(t, mk, steps, nil)
		if g, w := perKeyLines(rowLines(lines)), perKeyLines(want); g != w {
			t.Fatalf("seed %d (%s): got\n%s\nwant\n%s", seed, typ, g, w)
		}
		checkRestartsChangeNothing(t, rng, mk, steps, lines)
		if seed%5 == 0 {
			if g := pebbleLines(t, mk, steps); !slices.Equal(g, lines) {
				t.Fatalf("seed %d: Pebble differs from heap:\n%s", seed, diffLines(lines, g))
			}
		}
	}
}

// pebbleLines runs steps on a Pebble backend, with one restore halfway.
func pebbleLines(t *testing.T, mk []newStage, steps []step) []string {
	var clock int64
	groups := keygroup.Range{Start: 0, End: maxPar - 1}
	c := openSubtaskOn(t, t.TempDir(), mk, &clock, nil, groups)
	var lines []string
	for i, s := range steps {
		if i == len(steps)/2 {
			parts := c.snapshot(t, 1)
			lines = append(lines, c.out.take()...)
			c = openSubtaskOn(t, t.TempDir(), mk, &clock, parts, groups)
		}
		step1(t, c, s)
	}
	return append(lines, c.out.take()...)
}

// TestTemporalJoinRescale checkpoints the join on one subtask halfway
// through a run and restores it on three, each with its key groups'
// probe rows, versions and timers: every key goes on as it would have.
func TestTemporalJoinRescale(t *testing.T) {
	for _, typ := range []JoinType{InnerJoin, LeftJoin} {
		rng := rand.New(rand.NewSource(7))
		steps := temporalSteps(rng, 400)
		opts := temporalOpts(typ)
		mk := temporalStage(opts)
		want := temporalExpected(typ, nil, steps)
		var got []string
		for _, r := range rescaledRows(t, mk, steps, opts.LeftKey()) {
			got = append(got, formatRow(r))
		}
		for i, w := range want {
			want[i], _, _ = strings.Cut(w, " @") // rows only
		}
		if g, w := perKeyLines(got), perKeyLines(want); g != w {
			t.Fatalf("%s: after rescaling, got\n%s\nwant\n%s", typ, g, w)
		}
	}
}
