package checkpoint

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weirstream/weir/event"
)

// TestRandomInvariants feeds seeded random event sequences to coordinators
// with random options and checks, after every call, the guarantees the
// package documents: ids rise, completed ids rise, at most MaxConcurrent
// pending, nothing after a final checkpoint, and actions only for open ids.
func TestRandomInvariants(t *testing.T) {
	var all strings.Builder
	for seed := range uint64(300) {
		trace := runRandom(t, seed)
		if again := runRandom(t, seed); again != trace {
			t.Fatalf("seed %d: two runs differ; the coordinator is not deterministic", seed)
		}
		all.WriteString(trace)
	}
	checkCoverage(t, all.String())
}

// checkCoverage fails if the random runs never reached an outcome, which
// would make the invariants above vacuous.
func checkCoverage(t *testing.T, traces string) {
	for _, want := range []string{"final=true", "notify-complete", "subsumed", "expired",
		"declined", "not persisted", "aborted:", "fail-job"} {
		n := strings.Count(traces, want)
		t.Logf("%-16s %d", want, n)
		if n == 0 {
			t.Errorf("no %q in any random run; widen the random steps", want)
		}
	}
}

// model is what a driver can infer from the actions alone.
type model struct {
	t          *testing.T
	seed       uint64
	opts       Options
	open       map[event.CheckpointID]bool // triggered, not ended; value: final
	persist    map[event.CheckpointID]bool // PersistCheckpoint returned
	lastID     event.CheckpointID
	completed  event.CheckpointID
	finalDone  bool
	trace      strings.Builder
	randomness *rand.Rand
}

func runRandom(t *testing.T, seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 42))
	m := &model{t: t, seed: seed, opts: randomOptions(r), randomness: r,
		open: map[event.CheckpointID]bool{}, persist: map[event.CheckpointID]bool{}}
	tasks := randomTasks(r)
	now := epoch
	c := New(m.opts, tasks, tasks[:1+r.IntN(len(tasks))], 1, now)
	m.lastID = 0
	for range 400 {
		now = now.Add(time.Duration(r.IntN(1500)) * time.Millisecond)
		m.apply(c, randomStep(c, r, now, tasks))
	}
	return m.trace.String()
}

func randomOptions(r *rand.Rand) Options {
	return Options{
		Interval:          []time.Duration{0, time.Second, 3 * time.Second}[r.IntN(3)],
		Timeout:           []time.Duration{2 * time.Second, 5 * time.Second, 20 * time.Second}[r.IntN(3)],
		MinPause:          []time.Duration{0, time.Second}[r.IntN(2)],
		MaxConcurrent:     1 + r.IntN(3),
		TolerableFailures: r.IntN(4) - 1,
	}
}

func randomTasks(r *rand.Rand) []event.SubtaskID {
	tasks := make([]event.SubtaskID, 1+r.IntN(4))
	for i := range tasks {
		tasks[i] = event.SubtaskID{Vertex: fmt.Sprintf("v%d", i%2), Index: i}
	}
	return tasks
}

// randomStep makes one random call. Ids are drawn around the ones in use,
// so that stale, current and unknown ids all occur.
func randomStep(c *Coordinator, r *rand.Rand, now time.Time, tasks []event.SubtaskID) []Action {
	id := c.NextID() - event.CheckpointID(r.IntN(4))
	task := tasks[r.IntN(len(tasks))]
	if r.IntN(10) == 0 {
		task = event.SubtaskID{Vertex: "stranger", Index: 0}
	}
	switch n := r.IntN(100); {
	case n < 25:
		return c.Tick(now)
	case n < 32:
		return c.TriggerNow(now, r.IntN(8) == 0)
	case n < 40:
		c.Progress(now, id, task, Phase(r.IntN(4)))
		return nil
	case n < 75:
		return c.Acknowledge(now, id, task, Ack{State: []byte(task.String())})
	case n < 80:
		return c.Decline(now, id, task, PhaseSync, errors.New("random"))
	case n < 92:
		return c.Persisted(now, id)
	case n < 96:
		return c.PersistFailed(now, id, errors.New("random"))
	default:
		return c.AbortAll(now, errors.New("failover"))
	}
}

func (m *model) apply(c *Coordinator, acts []Action) {
	for _, a := range acts {
		m.trace.WriteString(formatAction(a) + "\n")
		m.check(a)
	}
	var ids []event.CheckpointID
	for _, p := range c.Pending() {
		ids = append(ids, p.ID)
	}
	if len(ids) != len(m.open) || !slices.IsSorted(ids) {
		m.fail("Pending() = %v, actions left open %v", ids, m.open)
	}
}

func (m *model) check(a Action) {
	switch a := a.(type) {
	case TriggerCheckpoint:
		m.triggered(a)
	case PersistCheckpoint:
		m.mustBeOpen(a.ID, "persist")
		if m.persist[a.ID] {
			m.fail("second PersistCheckpoint for %d", a.ID)
		}
		m.persist[a.ID] = true
	case NotifyComplete:
		m.completedOne(a.ID)
	case AbortCheckpoint:
		m.mustBeOpen(a.ID, "abort")
		delete(m.open, a.ID)
	}
}

func (m *model) triggered(a TriggerCheckpoint) {
	if a.ID != m.lastID+1 && m.lastID != 0 {
		m.fail("trigger id %d after %d", a.ID, m.lastID)
	}
	if m.finalDone || slices.Contains(mapValues(m.open), true) {
		m.fail("trigger %d after or during a final checkpoint", a.ID)
	}
	m.lastID = a.ID
	m.open[a.ID] = a.Final
	if len(m.open) > m.opts.MaxConcurrent {
		m.fail("%d pending, max %d", len(m.open), m.opts.MaxConcurrent)
	}
}

func (m *model) completedOne(id event.CheckpointID) {
	m.mustBeOpen(id, "complete")
	if !m.persist[id] {
		m.fail("checkpoint %d completed without PersistCheckpoint", id)
	}
	if id <= m.completed {
		m.fail("completed %d after %d", id, m.completed)
	}
	m.completed, m.finalDone = id, m.finalDone || m.open[id]
	delete(m.open, id)
}

func (m *model) mustBeOpen(id event.CheckpointID, what string) {
	if _, ok := m.open[id]; !ok {
		m.fail("%s for checkpoint %d, which is not open", what, id)
	}
}

func (m *model) fail(format string, args ...any) {
	m.t.Helper()
	m.t.Fatalf("seed %d, options %+v: %s\ntrace:\n%s", m.seed, m.opts, fmt.Sprintf(format, args...), m.trace.String())
}

func mapValues[K comparable, V any](m map[K]V) []V {
	var out []V
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
