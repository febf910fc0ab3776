package watermark

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/weirstream/weir/event"
)

// TestValveProperties feeds the Valve random watermarks and status changes
// and checks it against a plain model after every step: the output never
// decreases, and it equals the minimum over the active, unfinished channels
// whose watermark has caught up with the previous output, when that is
// higher, else it stays. allIdle must match too, and the output is never
// MaxWatermark unless a channel sent it.
func TestValveProperties(t *testing.T) {
	var total stats
	for seed := uint64(1); seed <= 300; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			n := 1 + rng.IntN(6)
			m := newModel(n)
			v := NewValve(n)
			for step := range 200 {
				op := m.randomOp(rng)
				out, adv, allIdle := op.apply(v)
				m.check(t, fmt.Sprintf("step %d %v", step, op), out, adv, allIdle)
				total.count(adv, allIdle)
			}
		})
	}
	if total.advanced == 0 || total.allIdle == 0 {
		t.Fatalf("random ops too tame: %+v", total)
	}
}

type stats struct{ advanced, allIdle int }

func (s *stats) count(adv, allIdle bool) {
	if adv {
		s.advanced++
	}
	if allIdle {
		s.allIdle++
	}
}

type valveOp struct {
	kind string // wm, idle, active, end
	ch   int
	wm   event.Timestamp
}

func (o valveOp) String() string { return fmt.Sprintf("%s ch=%d wm=%d", o.kind, o.ch, o.wm) }

// apply runs the op on v. allIdle is read back with AllIdle for a watermark,
// whose call does not return it.
func (o valveOp) apply(v *Valve) (event.Timestamp, bool, bool) {
	switch o.kind {
	case "wm":
		out, adv := v.OnWatermark(o.ch, o.wm)
		return out, adv, v.AllIdle()
	case "idle":
		return v.OnIdle(o.ch)
	case "active":
		return v.OnActive(o.ch)
	}
	return v.OnEndOfInput(o.ch)
}

// model is the Valve's specification written as directly as possible.
type model struct {
	wm       []event.Timestamp
	idle     []bool
	finished []bool
	out      event.Timestamp
	sentMax  bool
}

func newModel(n int) *model {
	m := &model{wm: make([]event.Timestamp, n), idle: make([]bool, n), finished: make([]bool, n), out: event.MinWatermark}
	for i := range m.wm {
		m.wm[i] = event.MinWatermark
	}
	return m
}

// randomOp picks an op and applies it to the model's channel state.
func (m *model) randomOp(rng *rand.Rand) valveOp {
	o := valveOp{ch: rng.IntN(len(m.wm))}
	switch r := rng.IntN(20); {
	case r < 13:
		o.kind, o.wm = "wm", event.Timestamp(rng.IntN(1000))
		if rng.IntN(50) == 0 {
			o.wm = event.MaxWatermark
		}
	case r < 16:
		o.kind = "idle"
	case r < 19:
		o.kind = "active"
	default:
		o.kind = "end"
	}
	m.update(o)
	return o
}

func (m *model) update(o valveOp) {
	if m.finished[o.ch] {
		return
	}
	switch o.kind {
	case "wm":
		m.wm[o.ch] = max(m.wm[o.ch], o.wm)
		m.sentMax = m.sentMax || o.wm == event.MaxWatermark
	case "idle":
		m.idle[o.ch] = true
	case "active":
		m.idle[o.ch] = false
	case "end":
		m.finished[o.ch] = true
	}
}

func (m *model) check(t *testing.T, what string, out event.Timestamp, adv, allIdle bool) {
	t.Helper()
	want, wantAdv := m.out, false
	if low, ok := m.caughtUpMin(); ok && low > m.out {
		want, wantAdv = low, true
	}
	if out != want || adv != wantAdv {
		t.Fatalf("%s: got out=%d advanced=%v, want %d %v (model %+v)", what, out, adv, want, wantAdv, m)
	}
	if low, ok := m.activeMin(); adv && ok && low >= m.out && out != low {
		t.Fatalf("%s: advanced to %d, but every active channel caught up and their minimum is %d", what, out, low)
	}
	if out < m.out {
		t.Fatalf("%s: output went back from %d to %d", what, m.out, out)
	}
	if out == event.MaxWatermark && !m.sentMax {
		t.Fatalf("%s: MaxWatermark though no channel sent it", what)
	}
	if w := m.allIdle(); allIdle != w {
		t.Fatalf("%s: allIdle=%v, want %v", what, allIdle, w)
	}
	m.out = out
}

func (m *model) caughtUpMin() (event.Timestamp, bool) {
	low, ok := event.MaxWatermark, false
	for i, wm := range m.wm {
		if !m.idle[i] && !m.finished[i] && wm >= m.out {
			low, ok = min(low, wm), true
		}
	}
	return low, ok
}

// activeMin is the minimum over all active, unfinished channels, caught up
// or not.
func (m *model) activeMin() (event.Timestamp, bool) {
	low, ok := event.MaxWatermark, false
	for i, wm := range m.wm {
		if !m.idle[i] && !m.finished[i] {
			low, ok = min(low, wm), true
		}
	}
	return low, ok
}

func (m *model) allIdle() bool {
	open := 0
	for i := range m.wm {
		if !m.finished[i] {
			open++
			if !m.idle[i] {
				return false
			}
		}
	}
	return open > 0
}
