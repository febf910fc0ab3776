package exec

import (
	"fmt"

	"github.com/weirstream/weir/event"
)

// ApplyChangelog materialises a changelog into the table it describes, as
// Materialize does, and ignores what Materialize reports as an error.
func ApplyChangelog(rows []event.Row, keyIdx []int) map[string][]any {
	t, _ := Materialize(rows, keyIdx)
	return t
}

// Materialize applies a changelog, in order, to an empty table and returns
// the table. It is for tests and differential checks.
//
// With a primary key (keyIdx, field indexes) the table maps the key's
// printed values (as "[a, 1]") to the row: +I and +U put the row, -U and
// -D delete the key. Without one (keyIdx empty) the table is a multiset:
// +I and +U add a row, -U and -D remove one equal row; the i-th copy of a
// row is under its printed fields and "#i", as "[a, 1]#2".
//
// The error reports the first inconsistency, the table is complete anyway:
// a retraction of a row that is not there or, with a key, a -U/-D whose
// row differs from the stored one, and a +I for a key that is present.
func Materialize(rows []event.Row, keyIdx []int) (map[string][]any, error) {
	if len(keyIdx) > 0 {
		return materializeKeyed(rows, keyIdx)
	}
	bag := map[string][][]any{} // printed row → its copies
	var first error
	for i, r := range rows {
		k := printFields(r.Fields)
		if r.Kind.IsAccumulate() {
			bag[k] = append(bag[k], r.Fields)
			continue
		}
		if len(bag[k]) == 0 {
			if first == nil {
				first = fmt.Errorf("changelog row %d: %s retracts a row that is not in the table", i, r)
			}
			continue
		}
		bag[k] = bag[k][:len(bag[k])-1]
	}
	out := map[string][]any{}
	for k, copies := range bag {
		for i, c := range copies {
			out[fmt.Sprintf("%s#%d", k, i+1)] = c
		}
	}
	return out, first
}

func materializeKeyed(rows []event.Row, keyIdx []int) (map[string][]any, error) {
	out := map[string][]any{}
	var first error
	fail := func(i int, r event.Row, why string) {
		if first == nil {
			first = fmt.Errorf("changelog row %d: %s %s", i, r, why)
		}
	}
	for i, r := range rows {
		k := printFields(pick(r.Fields, keyIdx))
		old, ok := out[k]
		switch {
		case r.Kind == event.Insert && ok:
			fail(i, r, "inserts a key that is in the table")
		case !r.Kind.IsAccumulate() && !ok:
			fail(i, r, "retracts a key that is not in the table")
		case !r.Kind.IsAccumulate() && !sameRow(old, r.Fields):
			fail(i, r, fmt.Sprintf("retracts a row that differs from the table's %s", printFields(old)))
		}
		if r.Kind.IsAccumulate() {
			out[k] = r.Fields
		} else {
			delete(out, k)
		}
	}
	return out, first
}

// printFields prints fields as Flink's print connector does, "[a, 1]".
func printFields(fields []any) string {
	s := event.Row{Fields: fields}.String()
	return s[len(event.Insert.String()):]
}
