package jdbc

import (
	"fmt"
	"reflect"
	"strings"
	"unicode"

	"github.com/weirstream/weir/event"
)

// RowsOf makes the sink take values of type T (or *T), turned into rows by
// fn. Use it for changelogs of your own types.
func RowsOf[T any](fn func(T) event.Row) Opt {
	return optFunc(func(o *Options) {
		o.Converter = func(v any) (event.Row, error) {
			switch x := v.(type) {
			case T:
				return fn(x), nil
			case *T:
				return fn(*x), nil
			}
			var zero T
			return event.Row{}, fmt.Errorf("want a %T, got a %T", zero, v)
		}
	})
}

// StructRows makes the sink take values of struct type T (or *T) as +I
// rows: one column per exported field, named by its `jdbc:"name"` tag or,
// without one, by the field name in snake_case (OrderID → order_id). A tag
// `jdbc:"name,key"` marks a primary-key column; `jdbc:"-"` skips the field.
// It sets Columns and, if any field is marked, PrimaryKey.
func StructRows[T any]() Opt {
	cols, keys, idx := structColumns(reflect.TypeFor[T]())
	return optFunc(func(o *Options) {
		o.Columns = cols
		if len(keys) > 0 {
			o.PrimaryKey = keys
		}
		o.Converter = func(v any) (event.Row, error) {
			rv := reflect.ValueOf(v)
			if rv.Kind() == reflect.Pointer && !rv.IsNil() {
				rv = rv.Elem()
			}
			if rv.Type() != reflect.TypeFor[T]() {
				var zero T
				return event.Row{}, fmt.Errorf("want a %T, got a %T", zero, v)
			}
			fields := make([]any, len(idx))
			for i, fi := range idx {
				fields[i] = rv.FieldByIndex(fi).Interface()
			}
			return event.Row{Kind: event.Insert, Fields: fields}, nil
		}
	})
}

func structColumns(t reflect.Type) (cols, keys []string, idx [][]int) {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("jdbc.StructRows: %s is not a struct", t))
	}
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		tag := f.Tag.Get("jdbc")
		if tag == "-" {
			continue
		}
		name, opt, _ := strings.Cut(tag, ",")
		if name == "" {
			name = snake(f.Name)
		}
		cols = append(cols, name)
		idx = append(idx, f.Index)
		if opt == "key" {
			keys = append(keys, name)
		}
	}
	return cols, keys, idx
}

// snake turns OrderID into order_id and HTTPCode into http_code.
func snake(s string) string {
	r := []rune(s)
	var b strings.Builder
	for i, c := range r {
		if unicode.IsUpper(c) {
			prevLower := i > 0 && !unicode.IsUpper(r[i-1])
			nextLower := i > 0 && i+1 < len(r) && unicode.IsLower(r[i+1]) && unicode.IsUpper(r[i-1])
			if prevLower || nextLower {
				b.WriteByte('_')
			}
			c = unicode.ToLower(c)
		}
		b.WriteRune(c)
	}
	return b.String()
}
