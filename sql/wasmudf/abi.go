package wasmudf

import (
	"fmt"
	"math"
	"strings"

	"github.com/tetratelabs/wazero/api"

	"github.com/weirstream/weir/types"
)

// Names of the allocator a module exports when its functions take or
// return STRING or BYTES.
const (
	allocExport = "weir_alloc" // weir_alloc(len i32) i32: len bytes the host may write
	freeExport  = "weir_free"  // weir_free(ptr i32, len i32): gives back a weir_alloc'd or returned buffer
)

// signature is a function's SQL parameter and result types. declared tells
// a signature written in AS from one inferred from the export's WebAssembly
// types.
type signature struct {
	export   string
	params   []types.Kind
	result   types.Kind
	elem     types.Kind // an ARRAY result's element: STRING or BIGINT
	declared bool
}

// sqlKinds are the SQL types a declared signature may name.
var sqlKinds = map[string]types.Kind{
	"BOOLEAN": types.Boolean, "TINYINT": types.TinyInt, "SMALLINT": types.SmallInt,
	"INT": types.Int, "INTEGER": types.Int, "BIGINT": types.BigInt, "FLOAT": types.Float,
	"DOUBLE": types.Double, "STRING": types.String, "VARCHAR": types.String, "BYTES": types.Bytes,
}

// A declared result may also be ARRAY<STRING> or ARRAY<BIGINT>: a table
// function's rows of one column, for LATERAL TABLE(f(…)).

// parseSignature reads AS 'export' or AS 'export(T, …) RETURNS T'.
func parseSignature(as string) (signature, error) {
	open := strings.IndexByte(as, '(')
	if open < 0 {
		return signature{export: strings.TrimSpace(as)}, nil
	}
	s := signature{export: strings.TrimSpace(as[:open]), declared: true}
	shut := strings.IndexByte(as, ')')
	if shut < open {
		return s, fmt.Errorf("AS '%s': want 'export(TYPE, …) RETURNS TYPE'", as)
	}
	if list := strings.TrimSpace(as[open+1 : shut]); list != "" {
		for _, name := range strings.Split(list, ",") {
			k, err := sqlKind(as, name)
			if err != nil {
				return s, err
			}
			s.params = append(s.params, k)
		}
	}
	rest := strings.Fields(as[shut+1:])
	if len(rest) != 2 || !strings.EqualFold(rest[0], "RETURNS") {
		return s, fmt.Errorf("AS '%s': want RETURNS TYPE after the parameter list", as)
	}
	if inner, ok := arrayOf(rest[1]); ok {
		s.result = types.Array
		var err error
		s.elem, err = sqlKind(as, inner)
		if err == nil && s.elem != types.String && s.elem != types.BigInt {
			err = fmt.Errorf("AS '%s': an ARRAY result holds STRING or BIGINT, not %s", as, s.elem)
		}
		return s, err
	}
	k, err := sqlKind(as, rest[1])
	s.result = k
	return s, err
}

// arrayOf returns T of ARRAY<T>.
func arrayOf(t string) (string, bool) {
	u := strings.ToUpper(t)
	if !strings.HasPrefix(u, "ARRAY<") || !strings.HasSuffix(u, ">") {
		return "", false
	}
	return u[len("ARRAY<") : len(u)-1], true
}

func sqlKind(as, name string) (types.Kind, error) {
	k, ok := sqlKinds[strings.ToUpper(strings.TrimSpace(name))]
	if !ok {
		return 0, fmt.Errorf("AS '%s': type %q is not one a WebAssembly function takes "+
			"(BOOLEAN, TINYINT, SMALLINT, INT, BIGINT, FLOAT, DOUBLE, STRING, BYTES)", as, strings.TrimSpace(name))
	}
	return k, nil
}

// infer gives an undeclared export the SQL types of its WebAssembly
// numbers.
func infer(export string, def api.FunctionDefinition) signature {
	s := signature{export: export, result: numberKind(def.ResultTypes()[0])}
	for _, p := range def.ParamTypes() {
		s.params = append(s.params, numberKind(p))
	}
	return s
}

func numberKind(v api.ValueType) types.Kind {
	switch v {
	case api.ValueTypeI32:
		return types.Int
	case api.ValueTypeI64:
		return types.BigInt
	case api.ValueTypeF32:
		return types.Float
	}
	return types.Double
}

// lower is the WebAssembly signature a declared SQL signature needs.
func (s signature) lower() (params, results []api.ValueType) {
	for _, k := range s.params {
		if isBuffer(k) {
			params = append(params, api.ValueTypeI32, api.ValueTypeI32)
		} else {
			params = append(params, lowerNumber(k))
		}
	}
	if isBuffer(s.result) {
		return params, []api.ValueType{api.ValueTypeI64}
	}
	return params, []api.ValueType{lowerNumber(s.result)}
}

func lowerNumber(k types.Kind) api.ValueType {
	switch k {
	case types.BigInt:
		return api.ValueTypeI64
	case types.Float:
		return api.ValueTypeF32
	case types.Double:
		return api.ValueTypeF64
	}
	return api.ValueTypeI32
}

func isBuffer(k types.Kind) bool { return k == types.String || k == types.Bytes || k == types.Array }

func (s signature) usesBuffers() bool {
	for _, k := range append(s.params, s.result) {
		if isBuffer(k) {
			return true
		}
	}
	return false
}

// String is the signature as the user reads it: SQL types when declared,
// the export's WebAssembly types when inferred.
func (s signature) String() string {
	names := make([]string, len(s.params))
	for i := range s.params {
		names[i] = s.paramName(i)
	}
	if s.declared {
		return fmt.Sprintf("%s(%s) RETURNS %s", s.export, strings.Join(names, ", "), s.resultType())
	}
	return fmt.Sprintf("%s(%s) %s", s.export, strings.Join(names, ", "), api.ValueTypeName(lowerNumber(s.result)))
}

func (s signature) paramName(i int) string {
	if s.declared {
		return s.params[i].String()
	}
	return api.ValueTypeName(lowerNumber(s.params[i]))
}

// resultType is the SQL type a call returns.
func (s signature) resultType() types.Type {
	t := types.Type{Kind: s.result, Nullable: true}
	if s.result == types.Array {
		t.Elem = &types.Type{Kind: s.elem}
	}
	return t
}

// wasmTypes prints WebAssembly value types as a module's text does.
func wasmTypes(vs []api.ValueType) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = api.ValueTypeName(v)
	}
	return "(" + strings.Join(names, ", ") + ")"
}

// passes tells whether a SQL argument of type t may be given to parameter
// p: integers widen, FLOAT widens to DOUBLE, BOOLEAN passes as an integer
// (1 or 0), and any character string passes to STRING.
func passes(t types.Type, p types.Kind) bool {
	switch p {
	case types.Int:
		return t.Kind == types.TinyInt || t.Kind == types.SmallInt || t.Kind == types.Int || t.Kind == types.Boolean
	case types.BigInt:
		return passes(t, types.Int) || t.Kind == types.BigInt
	case types.Double:
		return t.Kind == types.Float || t.Kind == types.Double
	case types.String:
		return t.Kind == types.String || t.Kind == types.Varchar || t.Kind == types.Char
	}
	return t.Kind == p
}

// number encodes a SQL number or boolean as parameter type p.
func number(v any, p api.ValueType) uint64 {
	switch x := v.(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case int64:
		if p == api.ValueTypeI32 {
			return api.EncodeI32(int32(x))
		}
		return api.EncodeI64(x)
	case float64:
		if p == api.ValueTypeF32 {
			return api.EncodeF32(float32(x))
		}
		return api.EncodeF64(x)
	}
	return 0
}

// value decodes a numeric result as SQL kind k.
func value(r uint64, k types.Kind) any {
	switch k {
	case types.Boolean:
		return api.DecodeI32(r) != 0
	case types.TinyInt, types.SmallInt, types.Int:
		return int64(api.DecodeI32(r))
	case types.BigInt:
		return int64(r)
	case types.Float:
		return float64(api.DecodeF32(r))
	}
	return math.Float64frombits(r)
}
