package binrow

import (
	"fmt"
	"reflect"
	"time"
	"unsafe"

	"github.com/weirstream/weir/event"
)

// A row read out of state (FieldsOfImmutable) is a []any whose integers,
// floats, strings and times would each be boxed into an allocation of its
// own: seven for a Nexmark bid. valueBlock is, per Layout, a struct type
// holding the row's []any backing array and a slot for each such value;
// one allocation of it holds the fields and every value, each interface
// pointing at its slot (event.BoxAt). A value that outlives the row (kept in an
// aggregate's state, say) keeps the block alive: a few hundred bytes, not
// eight.
type valueBlock struct {
	typ  reflect.Type
	slot []uintptr // per field: its value's offset in the block; 0 when boxed as before
}

var (
	int64Type   = reflect.TypeFor[int64]()
	float64Type = reflect.TypeFor[float64]()
	stringType  = reflect.TypeFor[string]()
	timeType    = reflect.TypeFor[time.Time]()
)

// newValueBlock lays out the block of rows of kinds: the fields array
// first (at offset 0), then the slots.
func newValueBlock(kinds []slotKind) *valueBlock {
	fields := []reflect.StructField{{Name: "Fields", Type: reflect.ArrayOf(len(kinds), reflect.TypeFor[any]())}}
	var of []int // the field each slot is of
	for i, k := range kinds {
		t := slotType(k)
		if t == nil {
			continue
		}
		fields = append(fields, reflect.StructField{Name: fmt.Sprintf("V%d", i), Type: t})
		of = append(of, i)
	}
	b := &valueBlock{typ: reflect.StructOf(fields), slot: make([]uintptr, len(kinds))}
	for j, i := range of {
		b.slot[i] = b.typ.Field(j + 1).Offset
	}
	return b
}

func slotType(k slotKind) reflect.Type {
	switch k {
	case kindInt:
		return int64Type
	case kindFloat:
		return float64Type
	case kindString:
		return stringType
	case kindTime:
		return timeType
	}
	return nil
}

var (
	int64Word   = any(int64(0))
	float64Word = any(float64(0))
	stringWord  = any("")
	timeWord    = any(time.Time{})
)

// FieldsOfImmutable is Fields of a row whose bytes never change for as
// long as any of its values lives (a row kept in state: built once,
// replaced, never written): its strings point into r instead of into a
// copy of its tail, which a row with long strings paid on every read, and
// the fields and their values are one allocation (valueBlock).
func (l *Layout) FieldsOfImmutable(r Row) []any {
	p := reflect.New(l.block.typ).UnsafePointer()
	dst := unsafe.Slice((*any)(p), len(l.kinds))
	var tail string
	if len(r) > l.header {
		tail = unsafe.String(&r[l.header], len(r)-l.header)
	}
	for i, k := range l.kinds {
		at := unsafe.Add(p, l.block.slot[i])
		switch {
		case l.IsNull(r, i):
			// dst[i] stays nil
		case l.block.slot[i] == 0:
			dst[i] = l.value(r, i, tail)
		case k == kindInt:
			*(*int64)(at) = l.Int64(r, i)
			dst[i] = event.BoxAt(int64Word, at)
		case k == kindFloat:
			*(*float64)(at) = l.Float64(r, i)
			dst[i] = event.BoxAt(float64Word, at)
		case k == kindString:
			*(*string)(at) = l.tailString(r, i, tail)
			dst[i] = event.BoxAt(stringWord, at)
		case k == kindTime:
			*(*time.Time)(at) = l.Time(r, i)
			dst[i] = event.BoxAt(timeWord, at)
		}
	}
	return dst
}
