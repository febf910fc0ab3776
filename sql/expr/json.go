package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

func init() {
	register("JSON_VALUE", 2, -1, "json, path [RETURNING type] [… ON EMPTY] [… ON ERROR]", jsonFunc)
	register("JSON_QUERY", 2, -1, "json, path [WITH|WITHOUT … WRAPPER] [… ON EMPTY] [… ON ERROR]", jsonFunc)
	register("JSON_EXISTS", 2, -1, "json, path [TRUE|FALSE|UNKNOWN|ERROR ON ERROR]", jsonFunc)
}

// jsonClauses are the clauses of a JSON_EXISTS, JSON_VALUE or JSON_QUERY
// call, defaults filled in: NULL ON EMPTY and NULL ON ERROR (FALSE ON
// ERROR for JSON_EXISTS), WITHOUT ARRAY WRAPPER, RETURNING STRING.
type jsonClauses struct {
	onEmpty, onError   string // NULL, ERROR, DEFAULT, TRUE, FALSE, UNKNOWN, EMPTY ARRAY, EMPTY OBJECT
	defEmpty, defError int    // the DEFAULT expressions' argument index, or -1
	wrapper            string // WITHOUT, CONDITIONAL or UNCONDITIONAL
	ret                types.Type
}

func readJSONClauses(call *parser.FuncCall, a []*Compiled) (jsonClauses, error) {
	cl := jsonClauses{onEmpty: "NULL", onError: "NULL", defEmpty: -1, defError: -1, wrapper: "WITHOUT", ret: stringType(true)}
	if call.Name == "JSON_EXISTS" {
		cl.onError = "FALSE"
	}
	for i := 2; i < len(call.Args); i++ {
		k, ok := call.Args[i].(*parser.Keyword)
		if !ok {
			return cl, errAt(call.Args[i], "unexpected argument of %s: write %s(json, path …)", call.Name, call.Name)
		}
		w := k.Word
		switch {
		case w == "DEFAULT" && i+2 < len(call.Args):
			idx := i + 1
			if a[idx] == nil {
				return cl, errAt(call.Args[idx], "DEFAULT takes an expression")
			}
			if keyword(call, i+2) == "ON EMPTY" {
				cl.onEmpty, cl.defEmpty = "DEFAULT", idx
			} else {
				cl.onError, cl.defError = "DEFAULT", idx
			}
			i += 2
		case strings.HasPrefix(w, "RETURNING "):
			t, err := jsonReturning(k, strings.TrimPrefix(w, "RETURNING "))
			if err != nil {
				return cl, err
			}
			cl.ret = t
		case strings.HasSuffix(w, " ARRAY WRAPPER"):
			cl.wrapper = strings.Fields(w)[len(strings.Fields(w))-3]
		case strings.HasSuffix(w, " ON EMPTY"):
			cl.onEmpty = strings.TrimSuffix(w, " ON EMPTY")
		case strings.HasSuffix(w, " ON ERROR"):
			cl.onError = strings.TrimSuffix(w, " ON ERROR")
		default:
			return cl, errAt(k, "unexpected %s in %s", w, call.Name)
		}
	}
	for _, d := range []int{cl.defEmpty, cl.defError} {
		if d >= 0 && !jsonDefaultFits(a[d].Type, cl.ret) {
			return cl, hintAt(call.Args[d], "write a DEFAULT of the RETURNING type, or CAST it",
				"the DEFAULT of %s must be %s, found %s", call.Name, cl.ret.Base(), describeType(a[d]))
		}
	}
	return cl, nil
}

// jsonReturning is the RETURNING type of JSON_VALUE: the types Flink's
// JSON_VALUE converts its value to (its JsonValueCallGen), others refused.
func jsonReturning(k *parser.Keyword, name string) (types.Type, error) {
	switch name {
	case "STRING":
		return stringType(true), nil
	case "BOOLEAN":
		return boolType(true), nil
	case "INT":
		return intType(true), nil
	case "DOUBLE":
		return doubleType(true), nil
	}
	return types.Type{}, hintAt(k, "use RETURNING STRING, BOOLEAN, INT or DOUBLE, or CAST the STRING result",
		"JSON_VALUE … RETURNING %s is not supported", name)
}

// jsonDefaultFits tells whether a DEFAULT of type d is a value of the
// RETURNING type r as Flink passes it through: the same type, or for
// STRING a string, boolean or integer (which print the same in Java).
func jsonDefaultFits(d, r types.Type) bool {
	if d.Kind == types.Null || d.Kind == r.Kind {
		return true
	}
	return r.Kind == types.String && (d.IsString() || d.Kind == types.Boolean || d.IsInteger())
}

// jsonFunc is JSON_VALUE, JSON_QUERY and JSON_EXISTS with Flink's clauses
// (SqlJsonUtils). Paths are SQL/JSON's basic form: $, .key, ['key'], [n],
// in strict mode unless they start with lax. In strict mode a missing
// value (or JSON null, or input that is not JSON) is an error, handled by
// ON ERROR; in lax mode it is empty, handled by ON EMPTY. The call is NULL
// when any argument, DEFAULT expressions included, is NULL, as Flink's
// generated code is.
func jsonFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a[:2], famString); err != nil {
		return nil, err
	}
	cl, err := readJSONClauses(call, a)
	if err != nil {
		return nil, err
	}
	var konst *jsonPath
	if v, ok := constArg(a, 1); ok && v != nil {
		jp, err := parseJSONPathSpec(v.(string))
		if err != nil {
			return nil, errAt(call.Args[1], "invalid JSON path %s: %v", showValue(v), err)
		}
		konst = &jp
	}
	var live []*Compiled
	pos := map[int]int{} // argument index → index in live
	for i, x := range a {
		if x != nil {
			pos[i] = len(live)
			live = append(live, x)
		}
	}
	name := call.Name
	t := cl.ret
	if name == "JSON_EXISTS" {
		t = boolType(cl.onError == "UNKNOWN")
	}
	return fn(call, live, t, func(v []any) (any, error) {
		jp := konst
		if jp == nil {
			p, err := parseJSONPathSpec(v[1].(string))
			if err != nil {
				return nil, fmt.Errorf("%s cannot read the JSON path %s: %v", name, strconv.Quote(v[1].(string)), err)
			}
			jp = &p
		}
		x, exc := jp.read(v[0].(string))
		def := func(i int) any { return v[pos[i]] }
		switch name {
		case "JSON_EXISTS":
			return jsonExists(cl, x, exc)
		case "JSON_QUERY":
			return jsonQuery(cl, jp.lax, x, exc)
		}
		return jsonValue(cl, jp.lax, x, exc, def)
	}), nil
}

func jsonExists(cl jsonClauses, x any, exc error) (any, error) {
	if exc == nil {
		return x != nil, nil
	}
	switch cl.onError {
	case "TRUE":
		return true, nil
	case "FALSE":
		return false, nil
	case "UNKNOWN":
		return nil, nil
	}
	return nil, fmt.Errorf("JSON_EXISTS: %v (ERROR ON ERROR)", exc)
}

func jsonValue(cl jsonClauses, lax bool, x any, exc error, def func(int) any) (any, error) {
	if exc == nil {
		if x == nil || lax && !jsonScalar(x) {
			switch cl.onEmpty {
			case "ERROR":
				return nil, errors.New("JSON_VALUE: empty result (ERROR ON EMPTY)")
			case "DEFAULT":
				return jsonDefault(def(cl.defEmpty), cl.ret), nil
			}
			return nil, nil
		}
		if jsonScalar(x) {
			return jsonConvert(x, cl.ret)
		}
		exc = fmt.Errorf("strict mode requires a scalar value, found %s", compactJSON(x))
	}
	switch cl.onError {
	case "ERROR":
		return nil, fmt.Errorf("JSON_VALUE: %v (ERROR ON ERROR)", exc)
	case "DEFAULT":
		return jsonDefault(def(cl.defError), cl.ret), nil
	}
	return nil, nil
}

// jsonDefault is a DEFAULT value as Flink's String.valueOf prints it
// into a STRING result, or unchanged.
func jsonDefault(v any, ret types.Type) any {
	if ret.Kind != types.String {
		return v
	}
	switch y := v.(type) {
	case bool:
		return strconv.FormatBool(y)
	case int64:
		return strconv.FormatInt(y, 10)
	}
	return v
}

// jsonConvert gives a JSON scalar as the RETURNING type, as Flink's casts
// of the Jackson value do; conversions Flink's versions disagree on (a
// JSON integer as DOUBLE, a fraction as STRING, a string as BOOLEAN) are
// errors rather than a guess.
func jsonConvert(x any, t types.Type) (any, error) {
	n, isNum := x.(json.Number)
	integral := isNum && !strings.ContainsAny(n.String(), ".eE")
	switch {
	case t.Kind == types.String:
		switch y := x.(type) {
		case string:
			return y, nil
		case bool:
			return strconv.FormatBool(y), nil
		}
		if integral {
			b, _ := new(big.Int).SetString(n.String(), 10)
			return b.String(), nil
		}
		if isNum && plainFraction(n.String()) {
			return n.String(), nil
		}
	case t.Kind == types.Boolean:
		if b, ok := x.(bool); ok {
			return b, nil
		}
	case t.Kind == types.Int && integral:
		if i, err := strconv.ParseInt(n.String(), 10, 32); err == nil {
			return i, nil
		}
	case t.Kind == types.Double && isNum && !integral:
		if f, err := strconv.ParseFloat(n.String(), 64); err == nil {
			return f, nil
		}
	}
	return nil, fmt.Errorf("JSON_VALUE cannot give the JSON value %s as %s the way Flink does; RETURNING the type the JSON holds, or CAST the STRING result", compactJSON(x), t.Base())
}

var plainFractionRE = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,6})\.[0-9]*[1-9]$`)

// plainFraction tells whether a JSON number like 2.5 prints the same as
// a Java Double and as a BigDecimal (Flink's Jackson reads fractions as
// either, by version): no exponent, no trailing zero, at least 0.001 and
// below 10^7, at most 15 significant digits.
func plainFraction(s string) bool {
	if !plainFractionRE.MatchString(s) {
		return false
	}
	digits := strings.TrimLeft(strings.NewReplacer("-", "", ".", "").Replace(s), "0")
	f, _ := strconv.ParseFloat(s, 64)
	return len(digits) <= 15 && math.Abs(f) >= 1e-3
}

func jsonQuery(cl jsonClauses, lax bool, x any, exc error) (any, error) {
	if exc == nil {
		v := x
		switch _, isArr := x.([]any); {
		case x == nil:
		case cl.wrapper == "UNCONDITIONAL", cl.wrapper == "CONDITIONAL" && !isArr:
			v = []any{x}
		}
		switch {
		case v == nil || lax && jsonScalar(v):
			return jsonQueryBehavior("EMPTY", cl.onEmpty, errors.New("empty result"))
		case !jsonScalar(v):
			return compactJSON(v), nil
		}
		exc = fmt.Errorf("strict mode requires an array or object, found %s", compactJSON(v))
	}
	return jsonQueryBehavior("ERROR", cl.onError, exc)
}

func jsonQueryBehavior(on, behavior string, exc error) (any, error) {
	switch behavior {
	case "EMPTY ARRAY":
		return "[]", nil
	case "EMPTY OBJECT":
		return "{}", nil
	case "ERROR":
		return nil, fmt.Errorf("JSON_QUERY: %v (ERROR ON %s)", exc, on)
	}
	return nil, nil
}

func jsonScalar(x any) bool {
	switch x.(type) {
	case map[string]any, []any:
		return false
	}
	return true
}

// jsonPath is a parsed path with its mode.
type jsonPath struct {
	lax   bool
	steps []jsonStep
}

var jsonPathMode = regexp.MustCompile(`(?is)^\s*(strict|lax)\s+(.+)$`)

// parseJSONPathSpec reads [lax|strict] path; without a mode the path is
// strict, as in Flink.
func parseJSONPathSpec(spec string) (jsonPath, error) {
	jp := jsonPath{}
	if m := jsonPathMode.FindStringSubmatch(spec); m != nil {
		jp.lax = strings.EqualFold(m[1], "lax")
		spec = m[2]
	}
	steps, err := parseJSONPath(spec)
	jp.steps = steps
	return jp, err
}

// read applies the path to the JSON text: the value and no error, or in
// lax mode nil for no value, in strict mode an error.
func (jp *jsonPath) read(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		if jp.lax {
			return nil, nil
		}
		return nil, errors.New("the input is not JSON")
	}
	x, found := walkJSON(doc, jp.steps)
	if (!found || x == nil) && !jp.lax {
		return nil, errors.New("no value at the path")
	}
	return x, nil
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
