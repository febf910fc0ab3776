package heap

import (
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/weirstream/weir/state"
)

// private returns a value read from the state, stored at version ver, for
// its owner to modify in place if it likes: v itself, or — when a snapshot
// in flight may be encoding v and v is mutable — a deep copy, which the
// caller must store in v's place at the current version (copied is true).
// Flink's CopyOnWriteStateMap does the same on access.
//
// Why the copy, step by step, for a value p = &acc{Count: 1}:
//  1. Snapshot captures the key's map, which holds p (the map, not *p).
//  2. The owner reads p, runs p.Count++ and Put(p).
//  3. Write, on another goroutine, encodes *p.
//
// Without the copy, step 3 may encode Count 2, a value from after the
// barrier, and steps 2 and 3 race on *p. With it, step 2 modifies a copy
// that the live map holds from then on, and only the snapshot holds p.
func (c *core[E]) private(v any, ver uint64) (any, bool) {
	if c.immutable || !c.b.shared(ver) || immutable(v) {
		return v, false
	}
	return c.deepCopy(v), true
}

// deepCopy copies v with the codec: Copy if it is a state.Copier, else an
// encoding and decoding.
func (c *core[E]) deepCopy(v any) any {
	if cp, ok := c.sp.Codec.(state.Copier[any]); ok {
		return cp.Copy(v)
	}
	cv, err := decodeAll(c.sp.Codec, c.sp.Codec.Encode(nil, v))
	if err != nil {
		panic(fmt.Sprintf("heap: state %q: codec cannot decode its own encoding: %v", c.sp.Name, err))
	}
	return cv
}

// immutable reports whether v cannot change through the interface that
// holds it, so that the interface is a copy of its own: nil, or a value of
// a type immutableType accepts.
func immutable(v any) bool {
	if v == nil {
		return true
	}
	t := reflect.TypeOf(v)
	if k := t.Kind(); k != reflect.Array && k != reflect.Struct {
		return scalar(k)
	}
	if ok, found := immutableTypes.Load(t); found {
		return ok.(bool)
	}
	ok := immutableType(t)
	immutableTypes.Store(t, ok)
	return ok
}

// immutableTypes caches immutableType for array and struct types.
var immutableTypes sync.Map // reflect.Type → bool

// immutableType reports whether a value of type t holds no reference to
// anything mutable: it is made of booleans, numbers, strings, and arrays
// and structs of them, or of types immutable by their API although they
// hold pointers (time.Time; shopspring's decimal.Decimal, the SQL DECIMAL).
func immutableType(t reflect.Type) bool {
	switch {
	case t == timeType, t.PkgPath() == "github.com/shopspring/decimal" && t.Name() == "Decimal":
		return true
	case t.Kind() == reflect.Array:
		return immutableType(t.Elem())
	case t.Kind() == reflect.Struct:
		for f := range t.Fields() {
			if !immutableType(f.Type) {
				return false
			}
		}
		return true
	}
	return scalar(t.Kind())
}

var timeType = reflect.TypeFor[time.Time]()

// scalar reports whether values of kind k are booleans, numbers or strings.
func scalar(k reflect.Kind) bool {
	return reflect.Bool <= k && k <= reflect.Complex128 || k == reflect.String
}
