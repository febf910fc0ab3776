package expr

import (
	"fmt"
	"sort"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

func init() {
	register("ROW", 1, -1, "value, …", rowCtor)
	register("CARDINALITY", 1, 1, "ARRAY, MAP or MULTISET", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famCollection); err != nil {
			return nil, err
		}
		return fn(call, a, intType(false), func(v []any) (any, error) {
			switch x := v[0].(type) {
			case []any:
				return int64(len(x)), nil
			case map[any]any:
				return int64(len(x)), nil
			case types.MultisetValue:
				return x.Size(), nil
			}
			return nil, typeError(v[0], a[0].Type)
		}), nil
	})
	register("ELEMENT", 1, 1, "ARRAY", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famArray); err != nil {
			return nil, err
		}
		return fn(call, a, elemType(a[0].Type), func(v []any) (any, error) {
			xs := v[0].([]any)
			switch len(xs) {
			case 0:
				return nil, nil
			case 1:
				return xs[0], nil
			}
			return nil, fmt.Errorf("ELEMENT of an array with %d elements; it must have at most one", len(xs))
		}), nil
	})
	register("ARRAY_CONTAINS", 2, 2, "ARRAY, value", arrayContains)
	register("MAP_KEYS MAP_VALUES", 1, 1, "MAP", mapParts)
}

// elemType is the (nullable) element type of an ARRAY type.
func elemType(t types.Type) types.Type {
	if t.Kind != types.Array || t.Elem == nil {
		return nullType()
	}
	return withNull(*t.Elem, true)
}

func (c *compiler) arrayCtor(x *parser.ArrayCtor) (*Compiled, error) {
	if len(x.Elems) == 0 {
		return nil, errAt(x, "ARRAY[] needs at least one element")
	}
	elems := make([]*Compiled, len(x.Elems))
	for i, e := range x.Elems {
		v, err := c.expr(e)
		if err != nil {
			return nil, err
		}
		elems[i] = v
	}
	elems, et, err := c.common(elems, x, "ARRAY")
	if err != nil {
		return nil, err
	}
	return &Compiled{Type: types.Type{Kind: types.Array, Elem: &et}, Const: allConst(elems),
		Eval: func(row []any) (any, error) {
			out := make([]any, len(elems))
			for i, e := range elems {
				v, err := e.Eval(row)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}}, nil
}

func (c *compiler) mapCtor(x *parser.MapCtor) (*Compiled, error) {
	if len(x.Elems) == 0 || len(x.Elems)%2 != 0 {
		return nil, errAt(x, "MAP[…] needs key, value pairs, got %d values", len(x.Elems))
	}
	var keys, vals []*Compiled
	for i, e := range x.Elems {
		v, err := c.expr(e)
		if err != nil {
			return nil, err
		}
		if i%2 == 0 {
			keys = append(keys, v)
		} else {
			vals = append(vals, v)
		}
	}
	keys, kt, err := c.common(keys, x, "MAP keys")
	if err != nil {
		return nil, err
	}
	vals, vt, err := c.common(vals, x, "MAP values")
	if err != nil {
		return nil, err
	}
	if !hashableType(kt) {
		return nil, errAt(x, "MAP keys of type %s are not supported", typeName(kt))
	}
	return &Compiled{Type: types.Type{Kind: types.Map, Key: &kt, Elem: &vt}, Const: allConst(keys) && allConst(vals),
		Eval: func(row []any) (any, error) {
			out := make(map[any]any, len(keys))
			for i := range keys {
				k, err := keys[i].Eval(row)
				if err != nil {
					return nil, err
				}
				v, err := vals[i].Eval(row)
				if err != nil {
					return nil, err
				}
				out[k] = v // a later duplicate key wins, as in Flink
			}
			return out, nil
		}}, nil
}

// hashableType reports key types whose Go values work as map keys.
func hashableType(t types.Type) bool {
	switch t.Kind {
	case types.Array, types.Map, types.Row, types.Bytes, types.Multiset:
		return false
	}
	return true
}

// rowCtor is ROW(a, b, …) and (a, b, …), with fields EXPR$0, EXPR$1, ….
func rowCtor(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	fields := make([]types.Field, len(a))
	for i, x := range a {
		if x == nil {
			return nil, errAt(call.Args[i], "unexpected keyword in ROW")
		}
		fields[i] = types.Field{Name: fmt.Sprintf("EXPR$%d", i), Type: plain(x.Type)}
	}
	return &Compiled{Type: types.Type{Kind: types.Row, Fields: fields}, Const: allConst(a),
		Eval: func(row []any) (any, error) {
			out := make([]any, len(a))
			for i, x := range a {
				v, err := x.Eval(row)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}}, nil
}

func (c *compiler) fieldAccess(x *parser.FieldAccess) (*Compiled, error) {
	in, err := c.expr(x.X)
	if err != nil {
		return nil, err
	}
	return c.field(in, x.Field, x)
}

// index is array[i] (from 1; NULL when out of range) and map[key] (NULL
// when absent).
func (c *compiler) index(x *parser.Index) (*Compiled, error) {
	in, err := c.expr(x.X)
	if err != nil {
		return nil, err
	}
	idx, err := c.expr(x.Index)
	if err != nil {
		return nil, err
	}
	t := in.Type
	call := &parser.FuncCall{Pos: x.Pos, Name: "[]", Args: []parser.Expr{x.X, x.Index}}
	switch t.Kind {
	case types.Array:
		if err := expect(call, []*Compiled{in, idx}, famArray, famInteger); err != nil {
			return nil, err
		}
		return fn(call, []*Compiled{in, idx}, elemType(t), func(v []any) (any, error) {
			xs, i := v[0].([]any), v[1].(int64)
			if i < 1 || i > int64(len(xs)) {
				return nil, nil
			}
			return xs[i-1], nil
		}), nil
	case types.Map:
		k, err := c.coerce(idx, *t.Key, x.Index.Position())
		if err != nil {
			return nil, errAt(x.Index, "a key of %s must be %s, got %s", typeName(t), typeName(*t.Key), typeName(idx.Type))
		}
		return fn(call, []*Compiled{in, k}, withNull(*t.Elem, true), func(v []any) (any, error) {
			r, _ := mapLookup(v[0].(map[any]any), v[1])
			return r, nil
		}), nil
	case types.Null:
		return constant(x, nullType(), nil), nil
	}
	return nil, errAt(x, "cannot index a value of type %s; only ARRAY and MAP values take [ ]", typeName(t))
}

func arrayContains(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a[:1], famArray); err != nil {
		return nil, err
	}
	et := elemType(a[0].Type)
	if a[1] == nil {
		return nil, errAt(call.Args[1], "ARRAY_CONTAINS needs a value of the element type %s", typeName(et))
	}
	needle, err := c.coerce(a[1], et, call.Args[1].Position())
	if err != nil {
		return nil, errAt(call.Args[1], "ARRAY_CONTAINS needs a value of the element type %s", typeName(et))
	}
	arr := a[0]
	return &Compiled{Type: boolType(arr.Type.Nullable), Const: arr.Const && needle.Const,
		Eval: func(row []any) (any, error) {
			v, err := arr.Eval(row)
			if err != nil || v == nil {
				return nil, err
			}
			n, err := needle.Eval(row)
			if err != nil {
				return nil, err
			}
			for _, e := range v.([]any) {
				if nullSafeEqual(e, n) {
					return true, nil
				}
			}
			return false, nil
		}}, nil
}

// mapParts is MAP_KEYS and MAP_VALUES, in key order so that results are
// deterministic.
func mapParts(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famMap); err != nil {
		return nil, err
	}
	t := a[0].Type
	if t.Kind != types.Map {
		return constant(call, nullType(), nil), nil
	}
	et := *t.Key
	keys := call.Name == "MAP_KEYS"
	if !keys {
		et = *t.Elem
	}
	return fn(call, a, types.Type{Kind: types.Array, Elem: &et}, func(v []any) (any, error) {
		m := v[0].(map[any]any)
		ks := make([]any, 0, len(m))
		for k := range m {
			ks = append(ks, k)
		}
		sort.SliceStable(ks, func(i, j int) bool {
			if ks[i] == nil || ks[j] == nil {
				return ks[i] == nil && ks[j] != nil
			}
			n, _ := compareValues(ks[i], ks[j])
			return n < 0
		})
		out := make([]any, len(ks))
		for i, k := range ks {
			if keys {
				out[i] = k
			} else {
				out[i] = m[k]
			}
		}
		return out, nil
	}), nil
}
