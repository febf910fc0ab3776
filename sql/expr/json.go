package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/sql/types"
)

func init() {
	register("JSON_VALUE", 2, 2, "json, path", jsonFunc)
	register("JSON_QUERY", 2, 2, "json, path", jsonFunc)
	register("JSON_EXISTS", 2, 2, "json, path", jsonFunc)
}

// jsonFunc is JSON_VALUE (a scalar as STRING), JSON_QUERY (an object or
// array as JSON text) and JSON_EXISTS, with the default NULL ON EMPTY and
// NULL ON ERROR (FALSE ON ERROR for JSON_EXISTS). Paths are SQL/JSON's
// basic form: $, .key, ['key'], [n], with an optional lax or strict
// prefix.
func jsonFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	var konst []jsonStep
	if v, ok := constArg(a, 1); ok && v != nil {
		steps, err := parseJSONPath(v.(string))
		if err != nil {
			return nil, errAt(call.Args[1], "invalid JSON path %s: %v", showValue(v), err)
		}
		konst = steps
	}
	name := call.Name
	t := stringType(true)
	if name == "JSON_EXISTS" {
		t = boolType(false)
	}
	return fn(call, a, t, func(v []any) (any, error) {
		steps := konst
		if steps == nil {
			var err error
			if steps, err = parseJSONPath(v[1].(string)); err != nil {
				return jsonMiss(name), nil
			}
		}
		dec := json.NewDecoder(strings.NewReader(v[0].(string)))
		dec.UseNumber()
		var doc any
		if err := dec.Decode(&doc); err != nil {
			return jsonMiss(name), nil
		}
		x, found := walkJSON(doc, steps)
		switch name {
		case "JSON_EXISTS":
			return found, nil
		case "JSON_QUERY":
			switch x.(type) {
			case map[string]any, []any:
				return compactJSON(x), nil
			}
			return nil, nil
		}
		if !found {
			return nil, nil
		}
		switch y := x.(type) {
		case string:
			return y, nil
		case json.Number:
			return y.String(), nil
		case bool:
			return strconv.FormatBool(y), nil
		}
		return nil, nil // null, objects and arrays are not scalars
	}), nil
}

func jsonMiss(name string) any {
	if name == "JSON_EXISTS" {
		return false
	}
	return nil
}

func compactJSON(x any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(x)
	return strings.TrimRight(b.String(), "\n")
}

// jsonStep is one step of a path: a member name or an array index.
type jsonStep struct {
	key   string
	index int
	isIdx bool
}

func parseJSONPath(p string) ([]jsonStep, error) {
	p = strings.TrimSpace(p)
	for _, mode := range []string{"lax ", "strict "} {
		p = strings.TrimSpace(strings.TrimPrefix(p, mode))
	}
	if !strings.HasPrefix(p, "$") {
		return nil, errors.New("a path starts with $")
	}
	steps := []jsonStep{}
	for i := 1; i < len(p); {
		switch p[i] {
		case '.':
			i++
			if i < len(p) && p[i] == '[' {
				continue // $.['a b']
			}
			j := i
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i {
				return nil, errors.New("empty member name")
			}
			key := p[i:j]
			if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
				key = key[1 : len(key)-1]
			}
			steps = append(steps, jsonStep{key: key})
			i = j
		case '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 0 {
				return nil, errors.New("unclosed [")
			}
			in := strings.TrimSpace(p[i+1 : i+end])
			i += end + 1
			if len(in) >= 2 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0] {
				steps = append(steps, jsonStep{key: in[1 : len(in)-1]})
				continue
			}
			n, err := strconv.Atoi(in)
			if err != nil || n < 0 {
				return nil, errors.New("an index must be a number, like [0]")
			}
			steps = append(steps, jsonStep{index: n, isIdx: true})
		default:
			return nil, errors.New("unexpected character " + strconv.Quote(string(p[i])))
		}
	}
	return steps, nil
}

func walkJSON(doc any, steps []jsonStep) (any, bool) {
	for _, s := range steps {
		if s.isIdx {
			arr, ok := doc.([]any)
			if !ok || s.index >= len(arr) {
				return nil, false
			}
			doc = arr[s.index]
			continue
		}
		obj, ok := doc.(map[string]any)
		if !ok {
			return nil, false
		}
		if doc, ok = obj[s.key]; !ok {
			return nil, false
		}
	}
	return doc, true
}

func init() {
	register("JSON_OBJECT", 1, -1, "[KEY] key VALUE value, … [NULL|ABSENT ON NULL]", jsonObjectFunc)
	register("JSON_ARRAY", 1, -1, "value, … [NULL|ABSENT ON NULL]", jsonArrayFunc)
}

// jsonObjectFunc is JSON_OBJECT: its arguments are (NULL|ABSENT, k1, v1,
// …) as the parser reads them. The text is compact, members in the order
// written, as Flink's Jackson ObjectNode prints it; a value from another
// JSON_OBJECT or JSON_ARRAY call is inserted as JSON, not as a string.
func jsonObjectFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if len(a)%2 != 1 {
		return nil, errAt(call, "JSON_OBJECT takes KEY k VALUE v pairs")
	}
	for i := 1; i < len(a); i += 2 {
		if a[i] == nil || !a[i].Type.IsString() && a[i].Type.Kind != types.Null {
			return nil, errAt(call.Args[i], "a key of JSON_OBJECT must be a string")
		}
	}
	enc, err := jsonEncoders(call, a)
	if err != nil {
		return nil, err
	}
	absent := call.Args[0].(*parser.Keyword).Word == "ABSENT"
	return &Compiled{Type: stringType(false), Eval: func(row []any) (any, error) {
		var b strings.Builder
		b.WriteByte('{')
		first := true
		for i := 1; i < len(a); i += 2 {
			k, err := a[i].Eval(row)
			if err != nil {
				return nil, err
			}
			if k == nil {
				return nil, evalErr(call.Args[i].Position(), "JSON_OBJECT: a key is NULL")
			}
			v, err := a[i+1].Eval(row)
			if err != nil {
				return nil, err
			}
			if v == nil && absent {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(jsonString(k.(string)) + ":" + enc[i+1](v))
		}
		b.WriteByte('}')
		return b.String(), nil
	}}, nil
}

// jsonArrayFunc is JSON_ARRAY: (NULL|ABSENT, v1, …).
func jsonArrayFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	enc, err := jsonEncoders(call, a)
	if err != nil {
		return nil, err
	}
	absent := call.Args[0].(*parser.Keyword).Word == "ABSENT"
	return &Compiled{Type: stringType(false), Eval: func(row []any) (any, error) {
		var b strings.Builder
		b.WriteByte('[')
		first := true
		for i := 1; i < len(a); i++ {
			v, err := a[i].Eval(row)
			if err != nil {
				return nil, err
			}
			if v == nil && absent {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(enc[i](v))
		}
		b.WriteByte(']')
		return b.String(), nil
	}}, nil
}

// jsonEncoders returns how each value argument (a[i], i ≥ 1) prints as
// JSON. Types whose JSON text Weir does not yet print as Flink does
// (floats, DECIMAL, times, collections) are refused.
func jsonEncoders(call *parser.FuncCall, a []*Compiled) ([]func(any) string, error) {
	if _, ok := call.Args[0].(*parser.Keyword); !ok {
		return nil, errAt(call, "%s: write its arguments as %s", call.Name, builtins[call.Name].sig)
	}
	out := make([]func(any) string, len(a))
	for i := 1; i < len(a); i++ {
		if a[i] == nil {
			return nil, errAt(call.Args[i], "unexpected keyword in %s", call.Name)
		}
		if f, ok := call.Args[i].(*parser.FuncCall); ok && (f.Name == "JSON_OBJECT" || f.Name == "JSON_ARRAY") {
			out[i] = func(v any) string { return v.(string) } // nested JSON, inserted as is
			continue
		}
		t := a[i].Type
		switch {
		case t.IsString():
			out[i] = func(v any) string {
				if v == nil {
					return "null"
				}
				return jsonString(v.(string))
			}
		case t.IsInteger() || t.Kind == types.Boolean || t.Kind == types.Null:
			out[i] = func(v any) string {
				if v == nil {
					return "null"
				}
				return fmt.Sprint(v)
			}
		default:
			return nil, errAt(call.Args[i], "%s of a %s value is not supported yet (Weir prints strings, integers, booleans and nested JSON_OBJECT/JSON_ARRAY)",
				call.Name, t.Base())
		}
	}
	return out, nil
}

// jsonString is s as a JSON string: quotes, backslashes and control
// characters escaped, other characters as they are (Jackson's default).
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// isJSON is x IS JSON [VALUE|SCALAR|ARRAY|OBJECT] of one value: NULL is
// not JSON (Flink's NULL IS JSON is FALSE).
func isJSON(what parser.IsPredicate, v any) bool {
	s, ok := v.(string)
	if !ok || !json.Valid([]byte(s)) {
		return false
	}
	t := strings.TrimLeft(s, " \t\r\n")
	switch what {
	case parser.IsJSONObject:
		return strings.HasPrefix(t, "{")
	case parser.IsJSONArray:
		return strings.HasPrefix(t, "[")
	case parser.IsJSONScalar:
		return !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "[")
	}
	return true
}
