package main

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/types"
)

// udfs are the Go versions of the Java UDF classes queries.sql names in
// CREATE FUNCTION, by class.
var udfs = map[string]*expr.Function{
	// count_char(s, c) of q14: how many characters of s equal the first
	// character of c; 0 for a NULL s (Nexmark's CountChar returns a
	// primitive long).
	"com.github.nexmark.flink.udf.CountChar": {
		Result: func(args []types.Type) (types.Type, error) {
			if len(args) != 2 || !args[0].IsString() && args[0].Kind != types.Null || !args[1].IsString() {
				return types.Type{}, fmt.Errorf("count_char takes (VARCHAR, VARCHAR)")
			}
			return types.Type{Kind: types.BigInt}, nil
		},
		Eval: func(args []any) (any, error) {
			s, _ := args[0].(string)
			c, _ := args[1].(string)
			if s == "" || c == "" {
				return int64(0), nil
			}
			return int64(strings.Count(s, c[:1])), nil
		},
		Deterministic: true,
	},
}

// weirFunctions maps a script's CREATE FUNCTION name → class to the
// planner's functions (upper-case names).
func weirFunctions(decl map[string]string) (map[string]*expr.Function, error) {
	out := map[string]*expr.Function{}
	for name, class := range decl {
		f, ok := udfs[class]
		if !ok {
			return nil, fmt.Errorf("CREATE FUNCTION %s AS '%s': Weir has no Go version of this class", name, class)
		}
		out[strings.ToUpper(name)] = f
	}
	return out, nil
}
