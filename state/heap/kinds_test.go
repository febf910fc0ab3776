package heap

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

func TestValueState(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	v := state.Value(b, state.ValueDescriptor[int64]{Name: "count"})
	at(b, "a")
	if got, ok := v.Value(); ok || got != 0 {
		t.Fatalf("empty Value = %d, %v", got, ok)
	}
	v.Update(1)
	at(b, "b")
	v.Update(2)
	at(b, "a")
	if got, ok := v.Value(); !ok || got != 1 {
		t.Fatalf("Value(a) = %d, %v; want 1", got, ok)
	}
	v.Clear()
	if _, ok := v.Value(); ok {
		t.Fatal("Value after Clear present")
	}
	if keys := b.Keys("count"); !reflect.DeepEqual(keys, []any{"b"}) {
		t.Fatalf("Keys = %v, want [b]", keys)
	}
	// A second handle on the same name shares the data.
	at(b, "b")
	if got, _ := state.Value(b, state.ValueDescriptor[int64]{Name: "count"}).Value(); got != 2 {
		t.Fatalf("second handle reads %d, want 2", got)
	}
}

func TestValueStateOfInterfaceType(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	v := state.Value(b, state.ValueDescriptor[any]{Name: "any"})
	at(b, 1)
	v.Update(nil)
	if got, ok := v.Value(); !ok || got != nil {
		t.Fatalf("Value = %v, %v; want nil, true", got, ok)
	}
}

func TestListState(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	l := state.List(b, state.ListDescriptor[string]{Name: "buf"})
	at(b, 7)
	if got := l.Get(); got != nil {
		t.Fatalf("empty Get = %v", got)
	}
	l.Add("a")
	l.AddAll([]string{"b", "c"})
	l.AddAll(nil)
	got := l.Get()
	if !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("Get = %v", got)
	}
	got[0] = "mutated"
	if l.Get()[0] != "a" {
		t.Fatal("Get returned the live list")
	}
	buf := l.AppendTo([]string{"pre"})
	if !reflect.DeepEqual(buf, []string{"pre", "a", "b", "c"}) {
		t.Fatalf("AppendTo = %v", buf)
	}
	buf[1] = "mutated"
	if again := l.AppendTo(buf[:0]); !reflect.DeepEqual(again, []string{"a", "b", "c"}) || &again[0] != &buf[0] {
		t.Fatalf("AppendTo into the same buffer = %v (reused: %v)", again, &again[0] == &buf[0])
	}
	l.Update([]string{"x"})
	if got := l.Get(); !reflect.DeepEqual(got, []string{"x"}) {
		t.Fatalf("Get after Update = %v", got)
	}
	l.Update(nil)
	if got, keys := l.Get(), b.Keys("buf"); got != nil || keys != nil {
		t.Fatalf("after Update(nil): Get = %v, Keys = %v", got, keys)
	}
	l.Add("y")
	l.Clear()
	if got := l.Get(); got != nil {
		t.Fatalf("Get after Clear = %v", got)
	}
}

func TestMapState(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	m := state.Map(b, state.MapDescriptor[string, int]{Name: "counts"})
	at(b, "user1")
	if !m.IsEmpty() || m.Contains("x") {
		t.Fatal("new map not empty")
	}
	m.Put("x", 1)
	m.Put("y", 2)
	m.Put("z", 3)
	m.Put("x", 10)
	if v, ok := m.Get("x"); !ok || v != 10 {
		t.Fatalf("Get(x) = %d, %v", v, ok)
	}
	m.Remove("y")
	m.Remove("absent")
	if got := collect(m); !reflect.DeepEqual(got, map[string]int{"x": 10, "z": 3}) {
		t.Fatalf("Range = %v", got)
	}
	n := 0
	m.Range(func(string, int) bool { n++; return false })
	if n != 1 {
		t.Fatalf("Range after false visited %d entries", n)
	}
	m.Remove("x")
	m.Remove("z")
	if !m.IsEmpty() || b.Keys("counts") != nil {
		t.Fatalf("map not empty after removing everything: keys %v", b.Keys("counts"))
	}
	m.Put("w", 1)
	m.Clear()
	if !m.IsEmpty() {
		t.Fatal("map not empty after Clear")
	}
}

func collect[K comparable, V any](m state.MapState[K, V]) map[K]V {
	out := map[K]V{}
	m.Range(func(k K, v V) bool { out[k] = v; return true })
	return out
}

func TestReducingState(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	r := state.Reducing(b, state.ReducingDescriptor[int]{Name: "sum", ReduceFunc: func(a, b int) int { return a + b }})
	at(b, "k")
	if _, ok := r.Get(); ok {
		t.Fatal("empty Get present")
	}
	for _, v := range []int{1, 2, 3} {
		r.Add(v)
	}
	if got, ok := r.Get(); !ok || got != 6 {
		t.Fatalf("Get = %d, %v; want 6", got, ok)
	}
	r.Clear()
	if _, ok := r.Get(); ok {
		t.Fatal("Get after Clear present")
	}
}

func TestAggregatingState(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	a := state.Aggregating(b, state.AggregatingDescriptor[int64, *avgAcc, float64]{Name: "avg", AggregateFunc: avg{}})
	at(b, "k")
	if _, ok := a.Get(); ok {
		t.Fatal("empty Get present")
	}
	a.Add(1)
	a.Add(2)
	if got, ok := a.Get(); !ok || got != 1.5 {
		t.Fatalf("Get = %v, %v; want 1.5", got, ok)
	}
	a.Clear()
	if _, ok := a.Get(); ok {
		t.Fatal("Get after Clear present")
	}
}

func TestRegistrationErrors(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	state.Value(b, state.ValueDescriptor[int]{Name: "s"})
	cases := map[string]struct {
		f    func()
		want error
	}{
		"list over value": {func() { state.List(b, state.ListDescriptor[int]{Name: "s"}) }, state.ErrIncompatible},
		"reducing over value": {func() {
			state.Reducing(b, state.ReducingDescriptor[int]{Name: "s", ReduceFunc: func(a, b int) int { return a }})
		}, state.ErrIncompatible},
		"empty name":   {func() { state.Value(b, state.ValueDescriptor[int]{}) }, state.ErrInvalidDescriptor},
		"zero TTL":     {func() { state.Value(b, state.ValueDescriptor[int]{Name: "t", TTL: &state.TTLConfig{}}) }, state.ErrInvalidDescriptor},
		"nil reduce":   {func() { state.Reducing(b, state.ReducingDescriptor[int]{Name: "r"}) }, state.ErrInvalidDescriptor},
		"nil agg":      {func() { state.Aggregating(b, state.AggregatingDescriptor[int64, *avgAcc, float64]{Name: "a"}) }, state.ErrInvalidDescriptor},
		"restore late": {func() { panic(b.Restore(nil)) }, state.ErrRestoreAfterUse},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			r := mustPanic(t, c.f)
			if err, ok := r.(error); !ok || !errors.Is(err, c.want) {
				t.Fatalf("panicked with %v, want %v", r, c.want)
			}
		})
	}
}

func TestCurrentKeyChecks(t *testing.T) {
	b := newSubtask(t, 2, 0, nil) // key groups [0..63]
	v := state.Value(b, state.ValueDescriptor[int]{Name: "v"})
	if r := mustPanic(t, func() { v.Value() }); !reflect.DeepEqual(fmt.Sprint(r), "heap: keyed state accessed with no current key; SetCurrentKey must come first") {
		t.Fatalf("panic = %v", r)
	}
	mustPanic(t, func() { b.SetCurrentKey("k", 64) })
	b.SetCurrentKey("k", 63)
	if b.CurrentKey() != "k" || b.KeyGroupRange() != (keygroup.Range{Start: 0, End: 63}) {
		t.Fatalf("CurrentKey %v, range %v", b.CurrentKey(), b.KeyGroupRange())
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, o := range []Options{
		{MaxParallelism: -1},
		{MaxParallelism: 1 << 16},
		{KeyGroupRange: keygroup.Range{Start: 0, End: 128}},
		{KeyGroupRange: keygroup.Range{Start: -1, End: 3}},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	if _, err := New(Options{KeyGroupRange: keygroup.Range{Start: 5, End: 4}}); err != nil {
		t.Errorf("empty range rejected: %v", err)
	}
}
