package heap

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/weirstream/weir/state"
)

// encCounter is GobCodec[*tally] counting its encodings, with a Copier
// (so that copies on read encode nothing).
type encCounter struct {
	state.GobCodec[*tally]
	n *atomic.Int64
}

func (c encCounter) Encode(buf []byte, v *tally) []byte {
	c.n.Add(1)
	return c.GobCodec.Encode(buf, v)
}

func (encCounter) Copy(v *tally) *tally {
	x := v.clone()
	return &x
}

// countedTallies registers the tallies' states with codecs that count
// their encodings in n.
func countedTallies(b *Backend, n *atomic.Int64, ttl *state.TTLConfig) tallies {
	c := encCounter{n: n}
	return tallies{
		v: state.Value(b, state.ValueDescriptor[*tally]{Name: "v", Codec: c, TTL: ttl}),
		l: state.List(b, state.ListDescriptor[*tally]{Name: "l", Codec: c, TTL: ttl}),
		m: state.Map(b, state.MapDescriptor[string, *tally]{Name: "m", ValueCodec: c, TTL: ttl}),
	}
}

// TestChangedValueIsEncodedAgain changes values that earlier snapshots
// encoded, in every way a value can change, and requires the next
// snapshot to hold the new values: a cache of encodings across snapshots
// (issue 16 tried one, state/heap/doc.go) that reused an encoding after
// its value changed would restore the old ones.
func TestChangedValueIsEncodedAgain(t *testing.T) {
	bumped := func(c int, seen ...string) *tally { return &tally{Count: c, Seen: seen} }
	cases := []struct {
		name   string
		change func(h tallies)
		want   tallyContents
	}{
		{"read-modify-write in place", func(h tallies) {
			v, _ := h.v.Value()
			v.bump("a")
			h.v.Update(v)
			l := h.l.Get()
			l[1].bump("b")
			h.l.Update(l)
			x, _ := h.m.Get("x")
			x.bump("c")
			h.m.Put("x", x)
		}, tallyContents{
			V: bumped(2, "a"),
			L: []*tally{{Count: 1}, bumped(3, "b")},
			M: map[string]*tally{"x": bumped(2, "c"), "y": {Count: 2}},
		}},
		{"replace", func(h tallies) {
			h.v.Update(&tally{Count: 7})
			h.l.Update([]*tally{{Count: 8}})
			h.m.Put("y", &tally{Count: 9})
		}, tallyContents{
			V: &tally{Count: 7},
			L: []*tally{{Count: 8}},
			M: map[string]*tally{"x": {Count: 1}, "y": {Count: 9}},
		}},
		{"add and remove", func(h tallies) {
			h.l.Add(&tally{Count: 3})
			h.m.Remove("x")
			h.m.Put("z", &tally{Count: 4})
		}, tallyContents{
			V: &tally{Count: 1},
			L: []*tally{{Count: 1}, {Count: 2}, {Count: 3}},
			M: map[string]*tally{"y": {Count: 2}, "z": {Count: 4}},
		}},
	}
	for _, c := range cases {
		for _, inFlight := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/in flight %v", c.name, inFlight), func(t *testing.T) {
				var n atomic.Int64
				b := newSubtask(t, 1, 0, nil)
				h := countedTallies(b, &n, nil)
				h.put(b, 1)
				snapshotBlob(t, b, 0) // encodes the values once
				var s state.Snapshot
				if inFlight { // reads copy the values the snapshot holds
					s = snapshotOf(t, b)
				}
				at(b, 1)
				c.change(h)
				if s != nil {
					r := restored(t, nil, write(t, s))
					if got := registerTallies(r).read(r, 1); !reflect.DeepEqual(got, initial()) {
						t.Fatalf("the snapshot in flight restored %s, want %s", show(got), show(initial()))
					}
				}
				r := restored(t, nil, snapshotBlob(t, b, 0))
				if got := registerTallies(r).read(r, 1); !reflect.DeepEqual(got, c.want) {
					t.Fatalf("restored %s, want %s", show(got), show(c.want))
				}
			})
		}
	}
}

// TestEncodedEntriesExpireLater checks that entries a snapshot encoded still
// expire in later ones, with the timestamps of their last refresh (which
// a cache of value encodings must not keep).
func TestEncodedEntriesExpireLater(t *testing.T) {
	var n atomic.Int64
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	ttl := ttlOf(100, state.OnReadAndWrite)
	h := countedTallies(b, &n, ttl)
	h.put(b, 1) // at 0
	clock.ms = 60
	at(b, 1)
	h.l.Add(&tally{Count: 3})
	h.m.Put("z", &tally{Count: 4})
	snapshotBlob(t, b, clock.ms) // encodes the entries once
	clock.ms = 120               // the entries of 0 expired, those of 60 live until 160
	want := tallyContents{L: []*tally{{Count: 3}}, M: map[string]*tally{"z": {Count: 4}}}
	blob := snapshotBlob(t, b, clock.ms)
	r := restored(t, clock, blob)
	rh := countedTallies(r, new(atomic.Int64), ttl)
	if got := rh.read(r, 1); !reflect.DeepEqual(got, want) {
		t.Fatalf("restored at 120: %s, want %s", show(got), show(want))
	}
	// The reads above refreshed the restored entries to 120. In b, read at
	// 150 refreshes them to 150: a snapshot must carry 150, so they
	// outlive 160 and expire after 250.
	clock.ms = 150
	h.read(b, 1)
	blob = snapshotBlob(t, b, clock.ms)
	for _, c := range []struct {
		ms   int64
		want tallyContents
	}{{240, want}, {260, tallyContents{M: map[string]*tally{}}}} {
		clock.ms = c.ms
		r := restored(t, clock, blob)
		if got := countedTallies(r, new(atomic.Int64), ttl).read(r, 1); !reflect.DeepEqual(got, c.want) {
			t.Fatalf("restored at %d: %s, want %s", c.ms, show(got), show(c.want))
		}
	}
}

// TestSnapshotsOfMutatedValuesRandomized runs random changes of mutable values —
// stores, in-place read-modify-writes, list appends and replacements, map
// puts and removals — with snapshots written at once or after later
// changes, and requires each snapshot to restore a model of the state as
// of its Snapshot call.
func TestSnapshotsOfMutatedValuesRandomized(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomMutations(t, seed) })
	}
}

// model is the expected state: per key, a value, a list and a map.
type model struct {
	v map[int]tally
	l map[int][]tally
	m map[int]map[string]tally
}

func (m model) clone() model {
	c := model{map[int]tally{}, map[int][]tally{}, map[int]map[string]tally{}}
	for k, x := range m.v {
		c.v[k] = x.clone()
	}
	for k, l := range m.l {
		for _, x := range l {
			c.l[k] = append(c.l[k], x.clone())
		}
	}
	for k, mm := range m.m {
		c.m[k] = map[string]tally{}
		for uk, x := range mm {
			c.m[k][uk] = x.clone()
		}
	}
	return c
}

func (x tally) clone() tally { return tally{x.Count, slices.Clone(x.Seen)} }

// modelOf reads keys 0..keys-1 of b into a model.
func modelOf(b *Backend, h tallies, keys int) model {
	m := model{map[int]tally{}, map[int][]tally{}, map[int]map[string]tally{}}
	for k := range keys {
		c := h.read(b, k)
		if c.V != nil {
			m.v[k] = c.V.clone()
		}
		for _, x := range c.L {
			m.l[k] = append(m.l[k], x.clone())
		}
		for uk, x := range c.M {
			if m.m[k] == nil {
				m.m[k] = map[string]tally{}
			}
			m.m[k][uk] = x.clone()
		}
	}
	return m
}

func randomMutations(t *testing.T, seed uint64) {
	const keys = 6
	rng := rand.New(rand.NewPCG(seed, 7))
	b := newSubtask(t, 1, 0, nil)
	h := countedTallies(b, new(atomic.Int64), nil)
	want := model{map[int]tally{}, map[int][]tally{}, map[int]map[string]tally{}}
	type pending struct {
		s    state.Snapshot
		want model
	}
	var inFlight []pending
	check := func(p pending) {
		t.Helper()
		r := restored(t, nil, write(t, p.s))
		if got := modelOf(r, registerTallies(r), keys); !reflect.DeepEqual(got, p.want) {
			t.Fatalf("restored %+v, want %+v", got, p.want)
		}
	}
	uks := []string{"x", "y", "z"}
	for step := range 400 {
		k := rng.IntN(keys)
		at(b, k)
		tag := fmt.Sprint(step)
		switch op := rng.IntN(10); op {
		case 0:
			h.v.Update(&tally{Count: step})
			want.v[k] = tally{Count: step}
		case 1:
			if v, ok := h.v.Value(); ok {
				v.bump(tag)
				h.v.Update(v)
				x := want.v[k]
				x.bump(tag)
				want.v[k] = x
			}
		case 2:
			h.l.Add(&tally{Count: step})
			want.l[k] = append(want.l[k], tally{Count: step})
		case 3:
			if l := h.l.Get(); len(l) > 0 {
				j := rng.IntN(len(l))
				l[j].bump(tag)
				h.l.Update(l)
				want.l[k][j].bump(tag)
			}
		case 4:
			h.l.Update([]*tally{{Count: step}})
			want.l[k] = []tally{{Count: step}}
		case 5:
			uk := uks[rng.IntN(len(uks))]
			h.m.Put(uk, &tally{Count: step})
			if want.m[k] == nil {
				want.m[k] = map[string]tally{}
			}
			want.m[k][uk] = tally{Count: step}
		case 6:
			uk := uks[rng.IntN(len(uks))]
			if x, ok := h.m.Get(uk); ok {
				x.bump(tag)
				h.m.Put(uk, x)
				y := want.m[k][uk]
				y.bump(tag)
				want.m[k][uk] = y
			}
		case 7:
			uk := uks[rng.IntN(len(uks))]
			h.m.Remove(uk)
			if delete(want.m[k], uk); len(want.m[k]) == 0 {
				delete(want.m, k)
			}
		default: // a snapshot, written now or after later changes
			inFlight = append(inFlight, pending{snapshotOf(t, b), want.clone()})
			for len(inFlight) > 0 && rng.IntN(2) == 0 {
				check(inFlight[0])
				inFlight = inFlight[1:]
			}
		}
	}
	for _, p := range inFlight {
		check(p)
	}
	inFlight = nil
	check(pending{snapshotOf(t, b), want.clone()})
}
