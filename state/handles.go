package state

import (
	"fmt"
	"unsafe"
)

// ValueState holds one value per key (Flink's ValueState).
type ValueState[T any] interface {
	// Value returns the current key's value, and false when it has none
	// (or it expired). A mutable value may be modified in place and
	// written back with Update in the same record or timer (see the
	// package doc).
	Value() (T, bool)
	// Update sets the current key's value.
	Update(v T)
	// Clear removes the current key's value.
	Clear()
}

// ListState holds a list per key, or per subtask as operator state (Flink's
// ListState).
type ListState[T any] interface {
	// Get returns a copy of the list; nil when empty. Mutable elements may
	// be modified in place and written back with Update in the same record
	// or timer (see the package doc).
	Get() []T
	// AppendTo appends the list to dst and returns it, as Get would
	// return it: a reader that is done with the elements before its next
	// read passes the same buffer each time and allocates nothing.
	AppendTo(dst []T) []T
	// Add appends v.
	Add(v T)
	// AddAll appends vs.
	AddAll(vs []T)
	// Update replaces the list with vs; an empty vs clears it.
	Update(vs []T)
	// Clear removes the list.
	Clear()
}

// MapState holds a map per key (Flink's MapState).
type MapState[K comparable, V any] interface {
	// Get returns the value under k. A mutable value may be modified in
	// place and written back with Put in the same record or timer (see the
	// package doc); so may the values Range visits.
	Get(k K) (V, bool)
	// Put sets the value under k.
	Put(k K, v V)
	// Remove deletes k.
	Remove(k K)
	// Contains reports whether k has a value.
	Contains(k K) bool
	// Range calls f for each entry, in no particular order, until f
	// returns false.
	Range(f func(k K, v V) bool)
	// IsEmpty reports whether the map has no entries.
	IsEmpty() bool
	// Clear removes every entry.
	Clear()
}

// ReducingState folds added values into one with a ReduceFunc (Flink's
// ReducingState).
type ReducingState[T any] interface {
	// Get returns the reduced value.
	Get() (T, bool)
	// Add folds v in: the value becomes ReduceFunc(value, v), or v if
	// there was none.
	Add(v T)
	// Clear removes the value.
	Clear()
}

// AggregatingState folds added values into an accumulator with an
// AggregateFunction (Flink's AggregatingState). The accumulator type is a
// parameter of the descriptor only.
type AggregatingState[IN, OUT any] interface {
	// Get returns GetResult of the accumulator.
	Get() (OUT, bool)
	// Add folds v into the accumulator, creating it if needed.
	Add(v IN)
	// Clear removes the accumulator.
	Clear()
}

// must panics on a registration error. Registering state is setup code
// (Flink's getState throws there too): an error is a programming mistake —
// a name reused with another kind, or a codec that cannot decode the
// restored bytes.
func must[T any](t T, err error) T {
	if err != nil {
		panic(fmt.Errorf("state: registering state: %w", err))
	}
	return t
}

// Value returns the ValueState desc names in b, registering it on first use.
// It panics if desc is invalid or the name is registered with another kind.
func Value[T any](b KeyedBackend, desc ValueDescriptor[T]) ValueState[T] {
	spec := StateSpec{Name: desc.Name, Kind: KindValue, Codec: Erase(codecOr(desc.Codec)), TTL: desc.TTL}
	return valueState[T]{must(b.ValueTable(spec))}
}

// List returns the keyed ListState desc names in b, registering it on
// first use. It panics as Value does.
func List[T any](b KeyedBackend, desc ListDescriptor[T]) ListState[T] {
	spec := StateSpec{Name: desc.Name, Kind: KindList, Codec: Erase(codecOr(desc.Codec)), TTL: desc.TTL}
	return listState[T]{t: must(b.ListTable(spec)), scratch: new([]any)}
}

// Map returns the MapState desc names in b, registering it on first use. It
// panics as Value does.
func Map[K comparable, V any](b KeyedBackend, desc MapDescriptor[K, V]) MapState[K, V] {
	spec := StateSpec{
		Name: desc.Name, Kind: KindMap, TTL: desc.TTL,
		Codec: Erase(codecOr(desc.ValueCodec)), UserKeyCodec: Erase(codecOr(desc.KeyCodec)),
	}
	t := must(b.MapTable(spec))
	s := mapState[K, V]{t: t}
	if _, str := any(*new(K)).(string); str {
		s.str, _ = t.(StringKeyGetter)
	}
	return s
}

// GetView returns the value of s under the user key that the bytes uk
// spell, reading them in place when s's table reads string keys unboxed
// (StringKeyGetter), else copying them into a string: uk may be written
// again after the call. Nexmark q15 and q16 read a DISTINCT set once per
// row and value, and each read allocated the key and its box.
func GetView[V any](s MapState[string, V], uk []byte) (V, bool) {
	if m, ok := s.(mapState[string, V]); ok && m.str != nil {
		v, found := m.str.GetString(unsafe.String(unsafe.SliceData(uk), len(uk)))
		return as[V](v), found
	}
	return s.Get(string(uk))
}

// Prefetch prefetches the lookups as of the keyed state handle h (a
// ValueState, ListState, MapState… of this package), when its table can
// (CanPrefetch); else it does nothing.
func Prefetch(h any, as []Ahead) {
	if p := prefetcherOf(h); p != nil {
		p.Prefetch(as)
	}
}

// CanPrefetch reports whether h's table prefetches (Prefetcher): an
// operator need not build lookups for one that does not.
func CanPrefetch(h any) bool { return prefetcherOf(h) != nil }

func prefetcherOf(h any) Prefetcher {
	if t, ok := h.(interface{ table() any }); ok {
		p, _ := t.table().(Prefetcher)
		return p
	}
	return nil
}

// Reducing returns the ReducingState desc names in b, registering it on
// first use. It panics as Value does, and if desc.ReduceFunc is nil.
func Reducing[T any](b KeyedBackend, desc ReducingDescriptor[T]) ReducingState[T] {
	if desc.ReduceFunc == nil {
		panic(fmt.Errorf("%w: reducing state %q has no ReduceFunc", ErrInvalidDescriptor, desc.Name))
	}
	spec := StateSpec{Name: desc.Name, Kind: KindReducing, Codec: Erase(codecOr(desc.Codec)), TTL: desc.TTL}
	return reducingState[T]{must(b.ValueTable(spec)), desc.ReduceFunc}
}

// Aggregating returns the AggregatingState desc names in b, registering it
// on first use. It panics as Value does, and if desc.AggregateFunc is nil.
func Aggregating[IN, ACC, OUT any](b KeyedBackend, desc AggregatingDescriptor[IN, ACC, OUT]) AggregatingState[IN, OUT] {
	if desc.AggregateFunc == nil {
		panic(fmt.Errorf("%w: aggregating state %q has no AggregateFunc", ErrInvalidDescriptor, desc.Name))
	}
	spec := StateSpec{Name: desc.Name, Kind: KindAggregating, Codec: Erase(codecOr(desc.Codec)), TTL: desc.TTL}
	return aggregatingState[IN, ACC, OUT]{must(b.ValueTable(spec)), desc.AggregateFunc}
}

// OperatorList returns the operator ListState desc names in b, registering
// it on first use with redistribution mode. desc.TTL must be nil. It panics
// as Value does.
func OperatorList[T any](b OperatorStateBackend, desc ListDescriptor[T], mode Redistribution) ListState[T] {
	if desc.TTL != nil {
		panic(fmt.Errorf("%w: operator list state %q cannot have a TTL", ErrInvalidDescriptor, desc.Name))
	}
	spec := StateSpec{Name: desc.Name, Kind: KindList, Codec: Erase(codecOr(desc.Codec))}
	return listState[T]{t: must(b.ListTable(spec, mode)), scratch: new([]any)}
}

// as converts a stored value back to T. The comma-ok form turns a stored
// nil (possible when T is an interface type) into T's zero value.
func as[T any](v any) T {
	t, _ := v.(T)
	return t
}

type valueState[T any] struct{ t ValueTable }

func (s valueState[T]) Value() (T, bool) {
	v, ok := s.t.Get()
	return as[T](v), ok
}

func (s valueState[T]) Update(v T) { s.t.Put(v) }
func (s valueState[T]) table() any { return s.t }
func (s valueState[T]) Clear()     { s.t.Delete() }

type listState[T any] struct {
	t       ListTable
	scratch *[]any // AppendTo's buffer for a ListAppender table
}

func (s listState[T]) Get() []T {
	vs := s.t.Get()
	if len(vs) == 0 {
		return nil
	}
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = as[T](v)
	}
	return out
}

func (s listState[T]) AppendTo(dst []T) []T {
	a, ok := s.t.(ListAppender)
	if !ok {
		return append(dst, s.Get()...)
	}
	vs := a.AppendTo((*s.scratch)[:0])
	for _, v := range vs {
		dst = append(dst, as[T](v))
	}
	clear(vs)
	*s.scratch = vs
	return dst
}

// KeepsEncodings reports whether s, a ListState or ValueState, keeps only
// the encodings of the values its codec keeps in place (EncodingKeeper):
// such a value may be added or put over memory the caller reuses.
func KeepsEncodings(s any) bool {
	h, ok := s.(interface{ table() any })
	if !ok {
		return false
	}
	k, ok := h.table().(EncodingKeeper)
	return ok && k.KeepsEncodings()
}

func (s listState[T]) table() any { return s.t }

func (s listState[T]) Add(v T)       { s.t.Add(v) }
func (s listState[T]) AddAll(vs []T) { s.t.AddAll(boxAll(vs)) }
func (s listState[T]) Update(vs []T) { s.t.Update(boxAll(vs)) }
func (s listState[T]) Clear()        { s.t.Delete() }
func boxAll[T any](vs []T) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
}

// mapState is a MapState over t; str is t when K is string and t reads
// string keys unboxed.
type mapState[K comparable, V any] struct {
	t   MapTable
	str StringKeyGetter
}

func (s mapState[K, V]) table() any { return s.t }

func (s mapState[K, V]) Get(k K) (V, bool) {
	if s.str != nil { // K is string
		v, ok := s.str.GetString(*(*string)(unsafe.Pointer(&k)))
		return as[V](v), ok
	}
	v, ok := s.t.Get(k)
	return as[V](v), ok
}

func (s mapState[K, V]) Put(k K, v V)      { s.t.Put(k, v) }
func (s mapState[K, V]) Remove(k K)        { s.t.Remove(k) }
func (s mapState[K, V]) Contains(k K) bool { return s.t.Contains(k) }
func (s mapState[K, V]) IsEmpty() bool     { return s.t.IsEmpty() }
func (s mapState[K, V]) Clear()            { s.t.Delete() }

func (s mapState[K, V]) Range(f func(K, V) bool) {
	s.t.Range(func(k, v any) bool { return f(as[K](k), as[V](v)) })
}

type reducingState[T any] struct {
	t      ValueTable
	reduce func(a, b T) T
}

func (s reducingState[T]) Get() (T, bool) {
	v, ok := s.t.Get()
	return as[T](v), ok
}

func (s reducingState[T]) Add(v T) {
	if old, ok := s.t.Get(); ok {
		v = s.reduce(as[T](old), v)
	}
	s.t.Put(v)
}

func (s reducingState[T]) Clear() { s.t.Delete() }

type aggregatingState[IN, ACC, OUT any] struct {
	t   ValueTable
	agg AggregateFunction[IN, ACC, OUT]
}

func (s aggregatingState[IN, ACC, OUT]) Get() (OUT, bool) {
	acc, ok := s.t.Get()
	if !ok {
		var zero OUT
		return zero, false
	}
	return s.agg.GetResult(as[ACC](acc)), true
}

func (s aggregatingState[IN, ACC, OUT]) Add(v IN) {
	var acc ACC
	if old, ok := s.t.Get(); ok {
		acc = as[ACC](old)
	} else {
		acc = s.agg.CreateAccumulator()
	}
	s.t.Put(s.agg.Add(v, acc))
}

func (s aggregatingState[IN, ACC, OUT]) Clear() { s.t.Delete() }
