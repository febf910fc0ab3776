package sim

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
)

// ErrInjected marks a crash injected by Faults.
var ErrInjected = errors.New("sim: injected crash")

// Faults injects crashes at named points with a seeded random source: each
// call of Maybe(point) fails with probability Rate[point], until Budget
// crashes have happened. Safe for concurrent use.
type Faults struct {
	mu     sync.Mutex
	rnd    *rand.Rand
	Rate   map[string]float64
	Budget int
	// Fired lists the points that crashed, in order.
	Fired []string
	// plan, when set (NewPlan), replaces Rate and Budget by a script.
	plan *plan
	// Trace, if set, records each crash injected.
	Trace *Trace
}

// NewFaults returns a fault injector seeded with seed.
func NewFaults(seed int64, budget int, rate map[string]float64) *Faults {
	return &Faults{rnd: rand.New(rand.NewSource(seed)), Rate: rate, Budget: budget}
}

// Maybe returns an injected error at point, or nil. A nil *Faults never fails.
func (f *Faults) Maybe(point string) error {
	if f == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.plan != nil {
		return f.planStepLocked(point)
	}
	if len(f.Fired) >= f.Budget || f.rnd.Float64() >= f.Rate[point] {
		return nil
	}
	f.Fired = append(f.Fired, point)
	if f.Trace != nil {
		f.Trace.Add("fault " + point)
	}
	return fmt.Errorf("%w at %s (#%d)", ErrInjected, point, len(f.Fired))
}

// Count is the number of crashes injected so far.
func (f *Faults) Count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.Fired)
}
