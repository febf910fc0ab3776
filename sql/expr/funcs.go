package expr

import (
	"fmt"
	"sort"
	"strings"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// builtin is a scalar function: its arity and how to compile a call.
type builtin struct {
	minArgs, maxArgs int // maxArgs < 0: any number
	// sig describes the arguments for error messages, e.g. "STRING, INT".
	sig   string
	build func(c *compiler, call *parser.FuncCall, args []*Compiled) (*Compiled, error)
}

// builtins maps upper-case names to functions; filled by the init
// functions of the files that define them.
var builtins = map[string]*builtin{}

func register(names string, minArgs, maxArgs int, sig string,
	build func(c *compiler, call *parser.FuncCall, args []*Compiled) (*Compiled, error)) {
	for _, n := range strings.Fields(names) {
		builtins[n] = &builtin{minArgs: minArgs, maxArgs: maxArgs, sig: sig, build: build}
	}
}

var aggregates = map[string]bool{
	"COUNT": true, "SUM": true, "SUM0": true, "MIN": true, "MAX": true, "AVG": true,
	"FIRST_VALUE": true, "LAST_VALUE": true, "LISTAGG": true, "STDDEV": true, "STDDEV_POP": true,
	"STDDEV_SAMP": true, "VARIANCE": true, "VAR_POP": true, "VAR_SAMP": true, "COLLECT": true,
	"APPROX_COUNT_DISTINCT": true, "SINGLE_VALUE": true, "JSON_OBJECTAGG": true, "JSON_ARRAYAGG": true,
	"ARRAY_AGG": true,
}

// FunctionNames lists the built-in functions, scalar and aggregate,
// upper-cased and sorted (SHOW FUNCTIONS).
func FunctionNames() []string {
	out := make([]string, 0, len(builtins)+len(aggregates))
	for n := range builtins {
		out = append(out, n)
	}
	for n := range aggregates {
		if builtins[n] == nil {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// IsAggregate reports whether name (any case) is an aggregate function
// (COUNT, SUM, MIN, MAX, AVG, FIRST_VALUE, LAST_VALUE, LISTAGG, …). The
// planner computes aggregate calls; Compile accepts one only through
// Scope.Resolve.
func IsAggregate(name string) bool { return aggregates[strings.ToUpper(name)] }

// overOnly are the ranking and offset functions that exist only with OVER.
var overOnly = map[string]bool{
	"ROW_NUMBER": true, "RANK": true, "DENSE_RANK": true, "LEAD": true, "LAG": true,
	"CUME_DIST": true, "PERCENT_RANK": true, "NTILE": true,
}

// plannerOnly explains functions that only the planner can place.
var plannerOnly = map[string]string{
	"TUMBLE":            "window table functions go in FROM: FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '1' MINUTE))",
	"HOP":               "window table functions go in FROM: FROM TABLE(HOP(TABLE t, DESCRIPTOR(ts), slide, size))",
	"CUMULATE":          "window table functions go in FROM: FROM TABLE(CUMULATE(TABLE t, DESCRIPTOR(ts), step, size))",
	"SESSION":           "group by SESSION(ts, gap) or use the SESSION window table function in FROM",
	"CURRENT_WATERMARK": "CURRENT_WATERMARK(rowtime) is evaluated by the planner's operators",
}

// notSupported names Flink functions Weir leaves out on purpose.
var notSupported = map[string]string{
	"RAND":         "non-deterministic functions would give different results when a job replays after a failure",
	"RAND_INTEGER": "non-deterministic functions would give different results when a job replays after a failure",
	"UUID":         "non-deterministic functions would give different results when a job replays after a failure",
}

func isGroupAux(name string) bool {
	for _, w := range []string{"TUMBLE_", "HOP_", "SESSION_", "CUMULATE_"} {
		if strings.HasPrefix(name, w) {
			switch strings.TrimPrefix(name, w) {
			case "START", "END", "ROWTIME", "PROCTIME":
				return true
			}
		}
	}
	return false
}

// call compiles a function call.
func (c *compiler) call(call *parser.FuncCall) (*Compiled, error) {
	name := call.Name
	switch {
	case call.Over != nil:
		// The planner computes OVER calls of a SELECT list (OVER
		// aggregation, and ROW_NUMBER for deduplication and Top-N) before
		// expressions are compiled; one anywhere else reaches here.
		return nil, hintAt(call, "OVER calls go in the SELECT list of a query without GROUP BY; filter on one in an outer query",
			"%s(…) OVER (…) is not allowed here", name)
	case IsAggregate(name):
		return nil, hintAt(call, "aggregates go in the SELECT list or HAVING of a query, with GROUP BY for the other columns",
			"aggregate function %s is not allowed here", name)
	case overOnly[name]:
		return nil, hintAt(call, "write "+name+"() OVER (PARTITION BY … ORDER BY …)", "%s requires an OVER clause", name)
	case isGroupAux(name):
		return nil, hintAt(call, "use it in the SELECT list of a query grouped by the matching window",
			"group window function %s is not allowed here", name)
	case plannerOnly[name] != "":
		return nil, hintAt(call, plannerOnly[name], "%s is not a scalar function", name)
	case notSupported[name] != "":
		return nil, hintAt(call, notSupported[name], "function %s is not supported", name)
	}
	b := builtins[name]
	var udf *Function
	if b == nil {
		udf = c.udf(name)
		if udf == nil {
			return nil, c.unknownFunc(call)
		}
	}
	if call.Distinct || call.Filter != nil {
		return nil, errAt(call, "DISTINCT and FILTER apply only to aggregate functions, not to %s", name)
	}
	args, err := c.args(call)
	if err != nil {
		return nil, err
	}
	if udf != nil {
		return c.callUDF(call, udf, args)
	}
	if len(call.Args) < b.minArgs || (b.maxArgs >= 0 && len(call.Args) > b.maxArgs) {
		return nil, hintAt(call, fmt.Sprintf("call it as %s(%s)", name, b.sig), "%s takes %s, got %d",
			name, arity(b.minArgs, b.maxArgs), len(call.Args))
	}
	return b.build(c, call, args)
}

func arity(lo, hi int) string {
	switch {
	case hi < 0:
		return fmt.Sprintf("at least %d argument%s", lo, plural(lo))
	case lo == hi:
		return fmt.Sprintf("%d argument%s", lo, plural(lo))
	case hi == lo+1:
		return fmt.Sprintf("%d or %d arguments", lo, hi)
	}
	return fmt.Sprintf("%d to %d arguments", lo, hi)
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (c *compiler) udf(name string) *Function {
	if f := c.s.Functions[name]; f != nil {
		return f
	}
	for k, f := range c.s.Functions {
		if strings.EqualFold(k, name) {
			return f
		}
	}
	return nil
}

// args compiles the arguments of a call; a keyword argument (the DAY of
// EXTRACT(DAY FROM x)) is compiled to nil and read with keyword.
func (c *compiler) args(call *parser.FuncCall) ([]*Compiled, error) {
	out := make([]*Compiled, len(call.Args))
	for i, a := range call.Args {
		if _, ok := a.(*parser.Keyword); ok {
			continue
		}
		if _, ok := a.(*parser.Star); ok {
			return nil, errAt(a, "* is only allowed in COUNT(*)")
		}
		x, err := c.expr(a)
		if err != nil {
			return nil, err
		}
		out[i] = x
	}
	return out, nil
}

// keyword returns the word of keyword argument i, or "".
func keyword(call *parser.FuncCall, i int) string {
	if i < len(call.Args) {
		if k, ok := call.Args[i].(*parser.Keyword); ok {
			return k.Word
		}
	}
	return ""
}

func (c *compiler) unknownFunc(call *parser.FuncCall) error {
	names := make([]string, 0, len(builtins)+len(aggregates)+len(c.s.Functions))
	for n := range builtins {
		names = append(names, n)
	}
	for n := range aggregates {
		names = append(names, n)
	}
	for n := range c.s.Functions {
		names = append(names, n)
	}
	sort.Strings(names)
	hint := "register user-defined functions with CREATE FUNCTION"
	if best, ok := closest(call.Name, names); ok {
		hint = fmt.Sprintf("did you mean %s?", best)
	}
	return hintAt(call, hint, "unknown function %s", call.Name)
}

func (c *compiler) callUDF(call *parser.FuncCall, f *Function, args []*Compiled) (*Compiled, error) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		if a == nil {
			return nil, errAt(call.Args[i], "unexpected keyword argument to %s", call.Name)
		}
		ts[i] = a.Type
	}
	t, err := f.Result(ts)
	if err != nil {
		return nil, errAt(call, "%s(%s): %v", call.Name, typeList(ts), err)
	}
	pos := call.Pos
	return &Compiled{Type: t, Const: f.Deterministic && allConst(args), Eval: func(row []any) (any, error) {
		vals := make([]any, len(args))
		for i, a := range args {
			v, err := a.Eval(row)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		r, err := f.Eval(vals)
		return r, wrapEval(pos, err)
	}}, nil
}

// family is a class of argument types a function accepts.
type family int

const (
	famAny family = iota
	famNumeric
	famInteger
	famString
	famBool
	famTemporal  // DATE, TIMESTAMP, TIMESTAMP_LTZ
	famTimestamp // TIMESTAMP, TIMESTAMP_LTZ
	famStrOrBin
	famArray
	famMap
	famCollection // ARRAY, MAP or MULTISET
	famTimeOrStr  // a temporal value or a string holding one
	famClock      // DATE, TIME, TIMESTAMP, TIMESTAMP_LTZ (EXTRACT)
)

var famNames = map[family]string{
	famAny: "ANY", famNumeric: "NUMERIC", famInteger: "INTEGER", famString: "STRING", famBool: "BOOLEAN",
	famTemporal: "DATE or TIMESTAMP", famTimestamp: "TIMESTAMP", famStrOrBin: "STRING or BYTES",
	famArray: "ARRAY", famMap: "MAP", famCollection: "ARRAY, MAP or MULTISET", famTimeOrStr: "TIMESTAMP or STRING",
	famClock: "DATE, TIME or TIMESTAMP",
}

func (f family) accepts(x *Compiled) bool {
	t := x.Type
	if x.Interval != NotInterval {
		return f == famAny
	}
	if t.Kind == types.Null {
		return true
	}
	switch f {
	case famNumeric:
		return t.IsNumeric()
	case famInteger:
		return t.IsInteger()
	case famString:
		return t.IsString()
	case famBool:
		return t.Kind == types.Boolean
	case famTemporal:
		return isTemporal(t)
	case famClock:
		return isTemporal(t) || t.Kind == types.Time
	case famTimestamp:
		return isTimestamp(t)
	case famStrOrBin:
		return t.IsString() || t.Kind == types.Bytes
	case famArray:
		return t.Kind == types.Array
	case famMap:
		return t.Kind == types.Map
	case famCollection:
		return t.Kind == types.Array || t.Kind == types.Map || t.Kind == types.Multiset
	case famTimeOrStr:
		return isTemporal(t) || t.IsString()
	}
	return true
}

// expect checks the arguments against families, the last family
// repeating for variadic functions; keyword arguments are skipped.
func expect(call *parser.FuncCall, args []*Compiled, fams ...family) error {
	for i, a := range args {
		if a == nil {
			return errAt(call.Args[i], "unexpected keyword %s in %s", keyword(call, i), call.Name)
		}
		f := fams[min(i, len(fams)-1)]
		if !f.accepts(a) {
			want := make([]string, len(args))
			for j := range args {
				want[j] = famNames[fams[min(j, len(fams)-1)]]
			}
			got := make([]string, len(args))
			for j, x := range args {
				got[j] = describeType(x)
			}
			return hintAt(call.Args[i], fmt.Sprintf("%s expects %s(%s)", call.Name, call.Name, strings.Join(want, ", ")),
				"cannot apply %s to (%s): argument %d must be %s", call.Name, strings.Join(got, ", "), i+1, famNames[f])
		}
	}
	return nil
}

// fn builds a call that is NULL when any argument is NULL (the rule for
// most functions) and otherwise f of the values; the result type's
// nullability is t's or any argument's.
func fn(call *parser.FuncCall, args []*Compiled, t types.Type, f func(v []any) (any, error)) *Compiled {
	t.Nullable = t.Nullable || anyNullable(args)
	if len(args) == 0 {
		return &Compiled{Type: t, Const: true, Eval: func([]any) (any, error) {
			r, err := f(nil)
			return r, wrapEval(call.Pos, err)
		}}
	}
	return &Compiled{Type: t, Const: allConst(args), Eval: strict(call.Pos, args, f)}
}

// fnOverFirst is fn for a call whose arguments after the first are
// constants (LOWER(s), SPLIT_INDEX(s, '/', 3), REGEXP_EXTRACT(s, 'p', 2)):
// mk gets those constants once and returns what computes the result from
// the first argument's value alone, so that no []any of arguments is made
// per row (one passed through fn's f escapes). It returns nil, for the
// caller to use fn, when a later argument is not a constant or is NULL
// (the call is then NULL, as fn has it) or mk returns nil.
func fnOverFirst(call *parser.FuncCall, args []*Compiled, t types.Type, mk func(consts []any) func(x any) (any, error)) *Compiled {
	if len(args) == 0 {
		return nil
	}
	consts := make([]any, len(args)-1)
	for i := range consts {
		v, ok := constArg(args, i+1)
		if !ok || v == nil {
			return nil
		}
		consts[i] = v
	}
	f := mk(consts)
	if f == nil {
		return nil
	}
	t.Nullable = t.Nullable || anyNullable(args)
	x, pos := args[0].Eval, call.Pos
	return &Compiled{Type: t, Const: args[0].Const, Eval: func(row []any) (any, error) {
		v, err := x(row)
		if err != nil || v == nil {
			return nil, err
		}
		r, err := f(v)
		return r, wrapEval(pos, err)
	}}
}

// constArg returns the value of argument i when it is a constant.
func constArg(args []*Compiled, i int) (any, bool) {
	if i >= len(args) || args[i] == nil || !args[i].Const {
		return nil, false
	}
	v, err := args[i].Eval(nil)
	return v, err == nil
}
