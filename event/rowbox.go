package event

import "unsafe"

// A Row in a Record's Value is boxed: converting it to an interface copies
// its 32 bytes to a new heap allocation, on top of the one of its Fields.
// For operators that emit a row per input row, NewRow allocates the row
// and its fields together, and BoxRow makes an interface of the row in
// place: one allocation per row instead of two.

// rowWith is a row and its fields' backing array, allocated together.
type rowWith[A any] struct {
	row    Row
	fields A
}

func newRowWith[A any](n int) *Row {
	x := new(rowWith[A])
	x.row.Fields = unsafe.Slice((*any)(unsafe.Pointer(&x.fields)), n)
	return &x.row
}

// rowMakers[n] allocates a row of n fields in one allocation.
var rowMakers = [...]func(int) *Row{
	1: newRowWith[[1]any], 2: newRowWith[[2]any], 3: newRowWith[[3]any], 4: newRowWith[[4]any],
	5: newRowWith[[5]any], 6: newRowWith[[6]any], 7: newRowWith[[7]any], 8: newRowWith[[8]any],
	9: newRowWith[[9]any], 10: newRowWith[[10]any], 11: newRowWith[[11]any], 12: newRowWith[[12]any],
	13: newRowWith[[13]any], 14: newRowWith[[14]any], 15: newRowWith[[15]any], 16: newRowWith[[16]any],
	17: newRowWith[[17]any], 18: newRowWith[[18]any], 19: newRowWith[[19]any], 20: newRowWith[[20]any],
	21: newRowWith[[21]any], 22: newRowWith[[22]any], 23: newRowWith[[23]any], 24: newRowWith[[24]any],
	25: newRowWith[[25]any], 26: newRowWith[[26]any], 27: newRowWith[[27]any], 28: newRowWith[[28]any],
	29: newRowWith[[29]any], 30: newRowWith[[30]any], 31: newRowWith[[31]any], 32: newRowWith[[32]any],
}

// NewRow returns a row of kind with n NULL fields. The row and its fields
// are one allocation when n <= 32, so that BoxRow then boxes the row with
// none more. The fields' capacity is n.
func NewRow(kind RowKind, n int) *Row {
	if n <= 0 || n >= len(rowMakers) {
		return &Row{Kind: kind, Fields: make([]any, n)}
	}
	r := rowMakers[n](n)
	r.Kind = kind
	return r
}

// eface is the layout of an interface value (the Go runtime's).
type eface struct {
	typ, data unsafe.Pointer
}

// BoxAt returns an interface of template's dynamic type whose value is the
// one at p, without copying it: for non-pointer-shaped types (integers,
// floats, strings, times, slices, Row), whose interfaces point at their
// value, so the value may live inside a larger allocation (a row's fields
// next to their values). The value at p must never change afterwards:
// interfaces are immutable.
func BoxAt(template any, p unsafe.Pointer) any {
	v := template
	(*eface)(unsafe.Pointer(&v)).data = p
	return v
}

var rowTemplate = any(Row{})

// BoxRow returns *r as an interface value (dynamic type Row), as any(*r)
// would, but without copying the row: the interface refers to *r itself.
// Interfaces are immutable, so *r (its Kind and Fields header; not the
// fields' values, which any(*r) shares too) must never change afterwards.
func BoxRow(r *Row) any { return BoxAt(rowTemplate, unsafe.Pointer(r)) }
