package cep

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// Rows are single letters; variable v accepts the rows spelled like its
// name in vars (a variable named '.' accepts every row).
type script struct {
	vars string
	p    Pattern
}

func (sc script) run(t *testing.T, input string) string {
	t.Helper()
	n, err := New(sc.p)
	if err != nil {
		t.Fatal(err)
	}
	cond := func(v int, _ []Step, ev Event) (bool, error) {
		c := sc.vars[v]
		return c == '.' || ev.Row[0] == string(c), nil
	}
	var s State
	var out []string
	for i, r := range input {
		ms, err := n.Process(&s, Event{Seq: int64(i), Time: int64(i) * 10, Row: []any{string(r)}}, cond)
		if err != nil {
			return err.Error()
		}
		out = append(out, show(ms)...)
	}
	return strings.Join(out, " ")
}

// show prints a match as its rows' positions, each followed by its
// variable's letter: 0a1b2b.
func show(ms []*Partial) []string {
	var out []string
	for _, m := range ms {
		var b strings.Builder
		for _, st := range m.Steps {
			fmt.Fprintf(&b, "%d%c", st.Seq, 'A'+st.Var)
		}
		out = append(out, b.String())
	}
	return out
}

func el(v, min, max int, greedy bool) Element {
	return Element{Var: v, Min: min, Max: max, Greedy: greedy}
}

func TestConcatenationIsStrictlyContiguous(t *testing.T) {
	sc := script{vars: "abc", p: Pattern{Elements: []Element{el(0, 1, 1, false), el(1, 1, 1, false), el(2, 1, 1, false)}}}
	if got, want := sc.run(t, "azbcdabch"), "5A6B7C"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestGreedyAndReluctant(t *testing.T) {
	// The documentation's example: A B* C with A > 10, B < 15, C > 12 on
	// prices 10 11 12 13 14 16, coded as letters: x = only A, y = A and
	// B, z = A, B and C, w = A and C. Here a simpler alphabet: B accepts
	// 'b', C accepts 'b' and 'c' (a row both could take).
	greedy := script{vars: "abB", p: Pattern{Elements: []Element{el(0, 1, 1, false), el(1, 0, Unbounded, true), el(2, 1, 1, false)}}}
	cond := greedy
	// C accepts only 'c' here; B greedy swallows every b before it.
	cond.vars = "abc"
	if got, want := cond.run(t, "abbbc"), "0A1B2B3B4C"; got != want {
		t.Fatalf("greedy: got %q, want %q", got, want)
	}
	reluctant := cond
	reluctant.p.Elements = []Element{el(0, 1, 1, false), el(1, 0, Unbounded, false), el(2, 1, 1, false)}
	if got, want := reluctant.run(t, "abbbc"), "0A1B2B3B4C"; got != want {
		t.Fatalf("reluctant, one way to match: got %q, want %q", got, want)
	}
	// Where C would also take a b, greedy B keeps taking it while a
	// reluctant B stops at the first row C takes.
	g2 := script{vars: "ab.", p: greedy.p}
	if got, want := g2.run(t, "abbbc"), "0A1B2B3B4C"; got != want {
		t.Fatalf("greedy over an accept-all C: got %q, want %q", got, want)
	}
	r2 := script{vars: "ab.", p: reluctant.p}
	if got, want := r2.run(t, "abbbc"), "0A1C"; got != want {
		t.Fatalf("reluctant over an accept-all C: got %q, want %q", got, want)
	}
}

func TestBoundedQuantifiers(t *testing.T) {
	// A{2} B: exactly two a's right before b.
	sc := script{vars: "ab", p: Pattern{Elements: []Element{el(0, 2, 2, true), el(1, 1, 1, false)}}}
	if got, want := sc.run(t, "aaab ab aab"), "1A2A3B 8A9A10B"; got != want {
		t.Fatalf("{2}: got %q, want %q", got, want)
	}
	// A{1,2}? reluctant last: completes at its minimum.
	r := script{vars: "a", p: Pattern{Elements: []Element{el(0, 1, 2, false)}}}
	if got, want := r.run(t, "aaa"), "0A 1A 2A"; got != want {
		t.Fatalf("{1,2}?: got %q, want %q", got, want)
	}
	// A? B: the optional A may be passed.
	o := script{vars: "ab", p: Pattern{Elements: []Element{el(0, 0, 1, true), el(1, 1, 1, false)}}}
	if got, want := o.run(t, "bab"), "0B 1A2B"; got != want {
		t.Fatalf("?: got %q, want %q", got, want)
	}
	// {n,}: at least two, greedy, then b.
	atLeast := script{vars: "ab", p: Pattern{Elements: []Element{el(0, 2, Unbounded, true), el(1, 1, 1, false)}}}
	if got, want := atLeast.run(t, "abaaab"), "2A3A4A5B"; got != want {
		t.Fatalf("{2,}: got %q, want %q", got, want)
	}
}

func TestSkipStrategies(t *testing.T) {
	// A+? B… here A{1,} greedy then an accept-all B, on aaab: the
	// documentation's SUM example is in the compat suite; this checks the
	// pruning points.
	els := []Element{el(0, 1, Unbounded, true), el(1, 1, 1, false)}
	cases := []struct {
		skip Skip
		want string
	}{
		{SkipPastLastRow, "0A1A2A3B"},
		{SkipToNextRow, "0A1A2A3B 1A2A3B 2A3B"},
		{SkipToLast, "0A1A2A3B 2A3B"},
	}
	for _, c := range cases {
		sc := script{vars: "a.", p: Pattern{Elements: els, Skip: c.skip}}
		if got := sc.run(t, "aaab"); got != c.want {
			t.Errorf("skip %d: got %q, want %q", c.skip, got, c.want)
		}
	}
	first := script{vars: "a.", p: Pattern{Elements: els, Skip: SkipToFirst}}
	n, _ := New(first.p)
	var s State
	cond := func(v int, _ []Step, ev Event) (bool, error) { return v == 1 || ev.Row[0] == "a", nil }
	var err error
	for i, r := range "aab" {
		if _, err = n.Process(&s, Event{Seq: int64(i), Row: []any{string(r)}}, cond); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrSkip) {
		t.Fatalf("SKIP TO FIRST A at the match's first row: got %v, want ErrSkip", err)
	}
}

func TestCompletedMatchWaitsForEarlierPartialMatch(t *testing.T) {
	// PATTERN (A B+ C), B greedy. A takes x or b; B takes a b while its
	// match started at x, or while it has no b yet; C takes b or c. On
	// x b b b c the match from row 1 completes at row 3 while the one
	// from row 0 is still taking b's: it waits, so the earlier match is
	// emitted first (and, skipping past its last row, discards it).
	els := []Element{el(0, 1, 1, false), el(1, 1, Unbounded, true), el(2, 1, 1, false)}
	cond := func(v int, steps []Step, ev Event) (bool, error) {
		r := ev.Row[0].(string)
		switch v {
		case 0:
			return r == "x" || r == "b", nil
		case 1:
			return r == "b" && (steps[0].Row[0] == "x" || len(steps) == 1), nil
		}
		return r == "b" || r == "c", nil
	}
	for _, c := range []struct {
		skip Skip
		want string
	}{
		{SkipPastLastRow, "0A1B2B3B4C"},
		{SkipToNextRow, "0A1B2B3B4C 1A2B3C 2A3B4C"},
	} {
		n, _ := New(Pattern{Elements: els, Skip: c.skip})
		var s State
		var got []string
		for i, r := range "xbbbc" {
			ms, err := n.Process(&s, Event{Seq: int64(i), Row: []any{string(r)}}, cond)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, show(ms)...)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("skip %d: got %q, want %q", c.skip, strings.Join(got, " "), c.want)
		}
	}
}

func TestWithinDropsOldPartialMatches(t *testing.T) {
	// Rows are 10 ms apart: a b c spans 20 ms.
	p := Pattern{Elements: []Element{el(0, 1, 1, false), el(1, 1, 1, false), el(2, 1, 1, false)}}
	p.Within = 21
	if got, want := (script{vars: "abc", p: p}).run(t, "abc"), "0A1B2C"; got != want {
		t.Fatalf("within 21: got %q, want %q", got, want)
	}
	p.Within = 20
	if got := (script{vars: "abc", p: p}).run(t, "abc"); got != "" {
		t.Fatalf("within 20: got %q, want no match", got)
	}
	// Advance releases a completed match held back by a partial match
	// that then times out.
	n, _ := New(Pattern{Elements: []Element{el(0, 1, 1, false), el(1, 1, 2, false)}, Within: 15})
	var s State
	cond := func(v int, _ []Step, ev Event) (bool, error) { return true, nil }
	var got []string
	for i := range 2 {
		ms, err := n.Process(&s, Event{Seq: int64(i), Time: int64(i) * 10, Row: []any{"x"}}, cond)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, show(ms)...)
	}
	ms, _ := n.Advance(&s, 100)
	got = append(got, show(ms)...)
	if strings.Join(got, " ") != "0A1B" || len(s.Partials) != 0 || len(s.Completed) != 0 {
		t.Fatalf("got %v, state %+v", got, s)
	}
}

func TestValidate(t *testing.T) {
	for _, p := range []Pattern{
		{},
		{Elements: []Element{el(0, 0, Unbounded, true)}},
		{Elements: []Element{el(0, 2, 1, true)}},
	} {
		if _, err := New(p); err == nil {
			t.Errorf("New(%+v) accepted an invalid pattern", p)
		}
	}
}
