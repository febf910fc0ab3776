package expr

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/sql/parser"
)

// The rarer string functions of Flink: OVERLAY, INSTR with a start and an
// occurrence, TRANSLATE and ELT.

func init() {
	register("OVERLAY", 3, 4, "s PLACING r FROM start [FOR length]", overlay)
	register("TRANSLATE", 3, 3, "STRING, fromStr, toStr", translate)
	register("ELT", 2, -1, "index, expr, …", elt)
}

// overlay is OVERLAY(s PLACING r FROM start [FOR length]) as Flink's
// SqlFunctionUtils.overlay: a start before 1 or past the end leaves s as
// it is; the length defaults to r's.
func overlay(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	fams := []family{famString, famString, famInteger, famInteger}
	if err := expect(call, a, fams[:len(a)]...); err != nil {
		return nil, err
	}
	return fn(call, a, stringType(false), func(v []any) (any, error) {
		s, r := []rune(v[0].(string)), v[1].(string)
		start := v[2].(int64)
		n := int64(len([]rune(r)))
		if len(v) == 4 {
			n = v[3].(int64)
		}
		if start <= 0 || start > int64(len(s)) {
			return string(s), nil
		}
		var b strings.Builder
		b.WriteString(string(s[:start-1]))
		b.WriteString(r)
		if start+n <= int64(len(s)) && n > 0 {
			b.WriteString(string(s[start-1+n:]))
		}
		return b.String(), nil
	}), nil
}

// instr is INSTR(s, sub[, start[, nth]]) as Flink's SqlFunctionUtils.instr:
// the position (from 1) of the nth occurrence of sub in s searching from
// start, 0 when there is none; a negative start searches backwards from
// that position counted from the end; start 0 gives 0; nth must be
// positive.
func instr(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	fams := []family{famString, famString, famInteger, famInteger}
	if err := expect(call, a, fams[:len(a)]...); err != nil {
		return nil, err
	}
	return fn(call, a, intType(false), func(v []any) (any, error) {
		start, nth := int64(1), int64(1)
		if len(v) > 2 {
			start = v[2].(int64)
		}
		if len(v) > 3 {
			nth = v[3].(int64)
		}
		if nth <= 0 {
			return nil, fmt.Errorf("INSTR: the occurrence must be positive, got %d", nth)
		}
		return instrRunes([]rune(v[0].(string)), []rune(v[1].(string)), start, nth), nil
	}), nil
}

func instrRunes(s, sub []rune, start, nth int64) int64 {
	switch {
	case start == 0:
		return 0
	case start < 0:
		pos := instrRunes(reversed(s), reversed(sub), -start, nth)
		if pos == 0 {
			return 0
		}
		return int64(len(s)) + 2 - pos - int64(len(sub))
	}
	var index int64
	for range nth {
		index = runeIndex(s, sub, start-1) + 1
		if index == 0 {
			return 0
		}
		start = index + 1
	}
	return index
}

// runeIndex is Java's indexOf(sub, from) over characters: -1 when absent.
func runeIndex(s, sub []rune, from int64) int64 {
	if from < 0 {
		from = 0
	}
	for i := from; i+int64(len(sub)) <= int64(len(s)); i++ {
		if string(s[i:i+int64(len(sub))]) == string(sub) {
			return i
		}
	}
	return -1
}

func reversed(r []rune) []rune {
	out := make([]rune, len(r))
	for i, x := range r {
		out[len(r)-1-i] = x
	}
	return out
}

// translate is TRANSLATE(expr, fromStr, toStr): each character of expr
// found in fromStr becomes the character at the same place in toStr, or
// is removed when toStr is shorter (the first occurrence in fromStr
// decides). A NULL expr gives NULL; a NULL or empty fromStr leaves expr as
// it is; a NULL toStr is empty (Flink's TranslateFunction).
func translate(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	return &Compiled{Type: stringType(a[0].Type.Nullable), Const: allConst(a), Eval: func(row []any) (any, error) {
		v := make([]any, 3)
		for i, x := range a {
			var err error
			if v[i], err = x.Eval(row); err != nil {
				return nil, err
			}
		}
		if v[0] == nil || v[1] == nil || v[1] == "" {
			return v[0], nil
		}
		to, _ := v[2].(string)
		return translateString(v[0].(string), v[1].(string), to), nil
	}}, nil
}

func translateString(s, from, to string) string {
	toRunes := []rune(to)
	m := map[rune]rune{}
	for i, r := range []rune(from) {
		if _, seen := m[r]; seen {
			continue
		}
		m[r] = -1
		if i < len(toRunes) {
			m[r] = toRunes[i]
		}
	}
	var b strings.Builder
	for _, r := range s {
		t, ok := m[r]
		switch {
		case !ok:
			b.WriteRune(r)
		case t >= 0:
			b.WriteRune(t)
		}
	}
	return b.String()
}

// elt is ELT(index, expr, …): the index-th expr (from 1), of the exprs'
// least restrictive type; NULL when the index is NULL or out of range.
func elt(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	fams := []family{famInteger, famStrOrBin}
	if err := expect(call, a, fams...); err != nil {
		return nil, err
	}
	vals, t, err := c.common(a[1:], call, "ELT")
	if err != nil {
		return nil, err
	}
	t.Nullable = true
	idx := a[0]
	return &Compiled{Type: t, Const: allConst(a), Eval: func(row []any) (any, error) {
		i, err := idx.Eval(row)
		if err != nil || i == nil {
			return nil, err
		}
		n := i.(int64)
		if n < 1 || n > int64(len(vals)) {
			return nil, nil
		}
		return vals[n-1].Eval(row)
	}}, nil
}
