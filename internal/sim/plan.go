package sim

import "fmt"

// Step is one line of a fault plan: on the Nth call of Point counted from
// the moment the step becomes current, the plan moves to the next step, and
// that call crashes when Crash is set. A step without Crash is a marker: it
// orders the plan after an event ("the new attempt is restoring") without
// failing anything.
type Step struct {
	Point string
	N     int
	Crash bool
}

// Crash is the step "crash at the nth call of point".
func Crash(point string, n int) Step { return Step{Point: point, N: n, Crash: true} }

// After is the marker step "wait for the nth call of point".
func After(point string, n int) Step { return Step{Point: point, N: n} }

// plan is the script of a Faults made by NewPlan.
type plan struct {
	steps []Step
	cur   int // index of the current step
	seen  int // calls of steps[cur].Point since it became current
	calls map[string]int
}

// NewPlan returns a Faults that crashes by count rather than by chance: it
// walks steps in order, and only calls of the current step's point count.
// Counting by calls makes a run reproducible whatever the timing; with
// several subtasks calling the same point, which of them makes the Nth call
// may vary, but the Nth call is always the one that crashes.
//
// Put a marker between two crashes that must hit different attempts, e.g.
// NewPlan(Crash("process", 100), After("restore", 1), Crash("notify", 1)):
// the subtasks of a failed attempt may still call points until the runtime
// cancels them, but none of them restores; so the third step only counts
// calls made by the next attempt.
func NewPlan(steps ...Step) *Faults {
	for _, s := range steps {
		if s.N < 1 {
			panic(fmt.Sprintf("sim: plan step %+v: N must be at least 1", s))
		}
	}
	return &Faults{plan: &plan{steps: steps, calls: map[string]int{}}}
}

func (f *Faults) planStepLocked(point string) error {
	p := f.plan
	p.calls[point]++
	if p.cur >= len(p.steps) || p.steps[p.cur].Point != point {
		return nil
	}
	p.seen++
	s := p.steps[p.cur]
	if p.seen < s.N {
		return nil
	}
	p.cur, p.seen = p.cur+1, 0
	if !s.Crash {
		return nil
	}
	f.Fired = append(f.Fired, point)
	return fmt.Errorf("%w at %s (#%d, plan step %d)", ErrInjected, point, len(f.Fired), p.cur)
}

// PlanDone reports whether every step of the plan was reached.
func (f *Faults) PlanDone() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.plan != nil && f.plan.cur == len(f.plan.steps)
}

// PlanState describes how far the plan got, for failure messages.
func (f *Faults) PlanState() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.plan == nil {
		return "no plan"
	}
	return fmt.Sprintf("at step %d of %v; calls %v; fired %v", f.plan.cur, f.plan.steps, f.plan.calls, f.Fired)
}
