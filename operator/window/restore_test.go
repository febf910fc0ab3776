package window

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/keygroup"
)

// op is one input of a random run: an element, or a watermark when v is "".
type op struct {
	v  string
	ts int64
}

// randomOps makes a run whose elements are mostly on time and sometimes
// late by up to 20ms, with watermarks that only advance, ending with the
// end-of-input watermark.
func randomOps(rng *rand.Rand, n int) []op {
	var ops []op
	wm := int64(-50)
	for range n {
		if rng.IntN(5) == 0 {
			wm += rng.Int64N(12)
			ops = append(ops, op{ts: wm})
			continue
		}
		key := string(rune('a' + rng.IntN(6)))
		ts := wm + rng.Int64N(45) - 20
		ops = append(ops, op{v: fmt.Sprintf("%s:%d", key, 1+rng.IntN(9)), ts: ts})
	}
	return append(ops, op{ts: event.MaxWatermark})
}

// cluster is p subtasks of the operator, each owning its share of the key
// groups; elements go to the owner of their key, watermarks to all.
type cluster struct{ subtasks []*instance }

func newCluster(t testing.TB, opts Options, p int, parts map[string][][]byte) *cluster {
	c := &cluster{}
	for i := range p {
		c.subtasks = append(c.subtasks, openInstance(t, opts, keygroup.RangeFor(maxPar, p, i), parts))
	}
	return c
}

func (c *cluster) apply(t testing.TB, o op) {
	if o.v == "" {
		for _, s := range c.subtasks {
			s.watermark(t, o.ts)
		}
		return
	}
	kg := keygroup.ForKey(keyOf(o.v), maxPar)
	for _, s := range c.subtasks {
		if s.ctx.Keyed.KeyGroupRange().Contains(kg) {
			s.element(t, o.v, o.ts)
			return
		}
	}
	t.Fatalf("no subtask owns key group %d", kg)
}

// records returns what the subtasks emitted (watermarks left out) and
// forgets it, with the late counts summed.
func (c *cluster) records() (lines []string, late int64) {
	for _, s := range c.subtasks {
		for _, l := range s.out.take() {
			if !strings.HasPrefix(l, "watermark") {
				lines = append(lines, l)
			}
		}
		late += s.ctx.Metrics.LateDropped + s.ctx.Metrics.LateSide
		s.ctx.Metrics.LateDropped, s.ctx.Metrics.LateSide = 0, 0
	}
	return lines, late
}

type config struct {
	name string
	opts Options
}

func configs(t testing.TB) []config {
	var out []config
	for _, a := range []Assigner{Tumbling{Size: 10 * ms}, Sliding{Size: 12 * ms, Slide: 4 * ms, Offset: ms}, Session{Gap: 6 * ms}} {
		for _, fn := range []string{"sum", "avg", "list"} {
			for _, lateness := range []time.Duration{0, 7 * ms} {
				for _, tag := range []string{"", "late"} {
					opts := withFn(t, Options{Assigner: a, AllowedLateness: lateness, LateTag: tag}, fn)
					name := fmt.Sprintf("%v/%s/lateness=%v/tag=%q", a, fn, lateness, tag)
					out = append(out, config{name, opts})
				}
			}
		}
	}
	return out
}

// TestRestoreMetamorphic runs random inputs through one subtask, takes a
// snapshot at a random point and writes it while that subtask goes on, then
// restores it into 1, 2 or 3 fresh subtasks and feeds them the rest. The
// restored run must emit what the uninterrupted one emitted after the
// snapshot (in the same order with one subtask) and count the same late
// elements. Under -race this also checks that nothing the snapshot captured
// is modified in place.
func TestRestoreMetamorphic(t *testing.T) {
	for _, cfg := range configs(t) {
		t.Run(cfg.name, func(t *testing.T) {
			seeds := uint64(20)
			if testing.Short() {
				seeds = 3
			}
			for seed := range seeds {
				rng := rand.New(rand.NewPCG(seed, 7))
				ops := randomOps(rng, 300)
				checkRestore(t, cfg.opts, ops, rng.IntN(len(ops)), 1+rng.IntN(3))
			}
		})
	}
}

func checkRestore(t *testing.T, opts Options, ops []op, at, p int) {
	t.Helper()
	base := newCluster(t, opts, 1, nil)
	for _, o := range ops[:at] {
		base.apply(t, o)
	}
	base.records()
	wait := writeAsync(base.subtasks[0].snapshot(t))
	for _, o := range ops[at:] {
		base.apply(t, o)
	}
	want, wantLate := base.records()
	blobs, err := wait()
	if err != nil {
		t.Fatal(err)
	}
	restored := newCluster(t, opts, p, gather(blobs))
	// Watermarks are not state, in Weir as in Flink: a restored operator
	// starts at MinWatermark until its inputs send one. Replay the last one,
	// as the restarted upstream would, so the runs judge lateness alike.
	if wm, ok := lastWatermark(ops[:at]); ok {
		restored.apply(t, op{ts: wm})
		restored.records()
	}
	for _, o := range ops[at:] {
		restored.apply(t, o)
	}
	got, gotLate := restored.records()
	if p > 1 {
		slices.Sort(want)
		slices.Sort(got)
	}
	if gotLate != wantLate {
		t.Fatalf("restored at op %d into %d subtasks: %d late elements, want %d", at, p, gotLate, wantLate)
	}
	if d := firstDiff(got, want); d != "" {
		t.Fatalf("restored at op %d into %d subtasks: %s", at, p, d)
	}
}

func lastWatermark(ops []op) (int64, bool) {
	for i := len(ops) - 1; i >= 0; i-- {
		if ops[i].v == "" {
			return ops[i].ts, true
		}
	}
	return 0, false
}

// firstDiff describes where got and want first differ, "" if they are equal.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("line %d is %q, want %q", i, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d lines, want %d", len(got), len(want))
	}
	return ""
}

// TestTumblingSumOracle checks a reducing operator against a direct
// computation: without allowed lateness, an element counts in each of its
// windows that had not ended when it arrived, each window with elements
// fires once, and an element with no such window is late.
func TestTumblingSumOracle(t *testing.T) {
	for _, a := range []Assigner{Tumbling{Size: 10 * ms, Offset: -3 * ms}, Sliding{Size: 12 * ms, Slide: 4 * ms}} {
		for seed := range uint64(20) {
			ops := randomOps(rand.New(rand.NewPCG(seed, 9)), 400)
			c := newCluster(t, Options{Assigner: a, Reduce: sum}, 2, nil)
			for _, o := range ops {
				c.apply(t, o)
			}
			got, gotLate := c.records()
			want, wantLate := sumOracle(a, ops)
			slices.Sort(got)
			if d := firstDiff(got, want); d != "" || gotLate != wantLate {
				t.Fatalf("%v seed %d: %d late, want %d; %s", a, seed, gotLate, wantLate, d)
			}
		}
	}
}

func sumOracle(a Assigner, ops []op) (lines []string, late int64) {
	type kw struct {
		key string
		w   Window
	}
	sums := map[kw]int64{}
	wm := event.MinWatermark
	for _, o := range ops {
		if o.v == "" {
			wm = o.ts
			continue
		}
		k, n := parseElem(o.v)
		accepted := false
		for _, w := range a.AssignWindows(o.ts) {
			if w.MaxTimestamp() > wm {
				sums[kw{k, w}] += n
				accepted = true
			}
		}
		if !accepted {
			late++
		}
	}
	for x, s := range sums {
		lines = append(lines, fmt.Sprintf("emit %s:%d @%d", x.key, s, x.w.MaxTimestamp()))
	}
	slices.Sort(lines)
	return lines, late
}
