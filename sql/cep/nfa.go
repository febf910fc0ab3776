// Package cep owns the pattern automaton of MATCH_RECOGNIZE (Flink's CEP
// NFA for SQL): a pure state machine fed one row at a time, in the order
// of the partition's ORDER BY, that returns the completed matches. It does
// no I/O and keeps no clock: the caller passes each row's time, evaluates
// the DEFINE conditions through a callback, and stores the State.
//
// Semantics follow Flink's NFA as MATCH_RECOGNIZE compiles it: strict
// contiguity between and within variables; every row may start a match;
// all branches run at once; a greedy quantifier proceeds to the next
// variable only on a row its own condition rejects; a match completes when
// a row is taken into the last variable with its minimum reached; a
// completed match waits until no partial match started earlier, and is
// then emitted and prunes the partial and completed matches its AFTER
// MATCH SKIP strategy discards; WITHIN drops partial matches whose first
// row is that long before the current time.
package cep

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// Unbounded is Element.Max of a quantifier without an upper bound.
const Unbounded = -1

// Element is one pattern variable with its quantifier.
type Element struct {
	Var      int // index of the variable (its DEFINE condition)
	Min, Max int // Max Unbounded: no upper bound
	Greedy   bool
}

// Skip is an AFTER MATCH SKIP strategy.
type Skip int

const (
	// SkipPastLastRow resumes after the match's last row.
	SkipPastLastRow Skip = iota
	// SkipToNextRow resumes at the row after the match's first row.
	SkipToNextRow
	// SkipToFirst resumes at the first row of Pattern.SkipVar.
	SkipToFirst
	// SkipToLast resumes at the last row of Pattern.SkipVar.
	SkipToLast
)

// Pattern is a compiled PATTERN clause.
type Pattern struct {
	Elements []Element
	Skip     Skip
	SkipVar  int
	// Within, when > 0, is the WITHIN interval in ms: a partial match
	// whose first row is Within or more before the current time is dropped.
	Within int64
}

// ErrSkip is returned when AFTER MATCH SKIP TO FIRST|LAST names a
// variable with no row in the match, or one that would restart the match
// at its own first row.
var ErrSkip = errors.New("cep: cannot skip")

// Validate checks the pattern's shape.
func (p *Pattern) Validate() error {
	if len(p.Elements) == 0 {
		return fmt.Errorf("cep: empty pattern")
	}
	for _, e := range p.Elements {
		if e.Min < 0 || (e.Max != Unbounded && (e.Max < 1 || e.Max < e.Min)) {
			return fmt.Errorf("cep: invalid quantifier {%d,%d}", e.Min, e.Max)
		}
	}
	if last := p.Elements[len(p.Elements)-1]; last.Min < 1 {
		return fmt.Errorf("cep: the last variable must take at least one row")
	}
	return nil
}

// Event is one input row with its position in the partition's order.
type Event struct {
	Seq  int64 // increasing in processing order
	Time int64 // event time or processing time, ms
	Row  []any
}

// Step is a row mapped to a variable.
type Step struct {
	Event
	Var int
}

// Partial is a partial (or, once completed, a full) match: the rows
// taken so far and where in the pattern it stands.
type Partial struct {
	Elem, Count int
	Steps       []Step
}

func (m *Partial) start() int64 { return m.Steps[0].Seq }

// State is what the automaton keeps per partition between rows.
type State struct {
	// Partials are the partial matches, in the order they were made.
	Partials []*Partial
	// Completed are the matches waiting for earlier partial matches.
	Completed []*Partial
}

// Condition reports whether ev can be mapped to variable v after the
// rows of steps (the DEFINE condition of v; true for a variable without
// one).
type Condition func(v int, steps []Step, ev Event) (bool, error)

// NFA runs a Pattern.
type NFA struct {
	p Pattern
}

// New returns the automaton of p.
func New(p Pattern) (*NFA, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &NFA{p: p}, nil
}

// Process feeds one row and returns the matches it emits, in order.
func (n *NFA) Process(s *State, ev Event, cond Condition) ([]*Partial, error) {
	n.prune(s, ev.Time)
	var next, done []*Partial
	fresh := &Partial{}
	for _, pm := range append(slices.Clip(s.Partials), fresh) {
		succ, err := n.step(pm, ev, cond)
		if err != nil {
			return nil, err
		}
		for _, q := range succ {
			if q.Elem == len(n.p.Elements)-1 && q.Count >= n.p.Elements[q.Elem].Min {
				done = append(done, q)
			}
			if q.Count < n.max(q.Elem) || q.Elem < len(n.p.Elements)-1 {
				next = append(next, q)
			}
		}
	}
	s.Partials = next
	s.Completed = append(s.Completed, done...)
	return n.release(s)
}

// Advance drops the partial matches WITHIN has timed out at time now and
// returns the completed matches that were waiting for them.
func (n *NFA) Advance(s *State, now int64) ([]*Partial, error) {
	n.prune(s, now)
	return n.release(s)
}

func (n *NFA) prune(s *State, now int64) {
	if n.p.Within <= 0 {
		return
	}
	s.Partials = slices.DeleteFunc(s.Partials, func(m *Partial) bool { return now-m.Steps[0].Time >= n.p.Within })
}

func (n *NFA) max(elem int) int {
	if m := n.p.Elements[elem].Max; m != Unbounded {
		return m
	}
	return int(^uint(0) >> 1)
}

// step returns the partial matches pm becomes by taking ev: into its
// current element again, or, once that element has its minimum, into a
// later one (passing elements that may take no row).
func (n *NFA) step(pm *Partial, ev Event, cond Condition) ([]*Partial, error) {
	var out []*Partial
	elem, count := pm.Elem, pm.Count
	for elem < len(n.p.Elements) {
		e := n.p.Elements[elem]
		took := false
		if count < n.max(elem) {
			ok, err := cond(e.Var, pm.Steps, ev)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, pm.take(elem, count+1, e.Var, ev))
				took = true
			}
		}
		// Proceeding is an epsilon move to the next element; a greedy
		// quantifier may proceed only when it could not take the row.
		if count < e.Min || (e.Greedy && took) {
			break
		}
		elem, count = elem+1, 0
	}
	return out, nil
}

func (m *Partial) take(elem, count, v int, ev Event) *Partial {
	steps := append(slices.Clip(m.Steps), Step{Event: ev, Var: v})
	return &Partial{Elem: elem, Count: count, Steps: steps}
}

// release emits the completed matches no partial match started before,
// earliest first, each pruning what its skip strategy discards.
func (n *NFA) release(s *State) ([]*Partial, error) {
	var out []*Partial
	for len(s.Completed) > 0 {
		slices.SortStableFunc(s.Completed, func(a, b *Partial) int { return cmp.Compare(a.start(), b.start()) })
		m := s.Completed[0]
		if first := earliest(s.Partials); first >= 0 && m.start() > first {
			break
		}
		s.Completed = s.Completed[1:]
		cut, strict, err := n.pruningPoint(m)
		if err != nil {
			return out, err
		}
		drop := func(q *Partial) bool { return q.start() < cut || (!strict && q.start() == cut) }
		s.Partials = slices.DeleteFunc(s.Partials, drop)
		s.Completed = slices.DeleteFunc(s.Completed, drop)
		out = append(out, m)
	}
	return out, nil
}

func earliest(ps []*Partial) int64 {
	first := int64(-1)
	for _, p := range ps {
		if first < 0 || p.start() < first {
			first = p.start()
		}
	}
	return first
}

// pruningPoint is the row before which (strict) or up to which matches
// are discarded after m.
func (n *NFA) pruningPoint(m *Partial) (cut int64, strict bool, err error) {
	switch n.p.Skip {
	case SkipPastLastRow:
		return m.Steps[len(m.Steps)-1].Seq, false, nil
	case SkipToNextRow:
		return m.start(), false, nil
	}
	seq := int64(-1)
	for _, st := range m.Steps {
		if st.Var == n.p.SkipVar && (seq < 0 || n.p.Skip == SkipToLast) {
			seq = st.Seq
		}
	}
	switch {
	case seq < 0:
		return 0, false, fmt.Errorf("%w: the match has no row of the AFTER MATCH SKIP variable", ErrSkip)
	case n.p.Skip == SkipToFirst && seq == m.start():
		return 0, false, fmt.Errorf("%w: could not skip to first element of a match: AFTER MATCH SKIP TO FIRST would restart at the first row of the match it follows", ErrSkip)
	}
	return seq, true, nil
}
