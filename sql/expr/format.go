package expr

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/types"
)

// ValueString prints a value of type t as CAST(v AS STRING) does in Flink:
// integers in decimal, DOUBLE and FLOAT as Java prints them (1.0, 1.0E10),
// DECIMAL with its scale (1.50), BOOLEAN as TRUE or FALSE, DATE as
// yyyy-MM-dd, TIMESTAMP as yyyy-MM-dd HH:mm:ss with as many fractional
// digits as its precision (more only when non-zero), TIMESTAMP_LTZ in loc
// (nil: UTC), ARRAY as [a, b], MAP as {k=v}, ROW as (a, b), NULL as NULL.
func ValueString(v any, t types.Type, loc *time.Location) string {
	if v == nil {
		return "NULL"
	}
	switch t.Kind {
	case types.Float:
		if f, ok := v.(float64); ok {
			return javaFloat(f, 32)
		}
	case types.Double:
		if f, ok := v.(float64); ok {
			return javaFloat(f, 64)
		}
	case types.Decimal:
		if d, ok := v.(decimal.Decimal); ok {
			return d.StringFixed(int32(t.Scale))
		}
	case types.Date:
		if tm, ok := v.(time.Time); ok {
			return types.FormatDate(tm)
		}
	case types.Timestamp:
		if tm, ok := v.(time.Time); ok {
			return types.FormatTimestamp(tm.UTC(), t.Precision)
		}
	case types.Time:
		if tm, ok := v.(time.Time); ok {
			return types.FormatTime(tm.UTC(), t.Precision)
		}
	case types.TimestampLTZ:
		if tm, ok := v.(time.Time); ok {
			if loc == nil {
				loc = time.UTC
			}
			return types.FormatTimestamp(tm.In(loc), t.Precision)
		}
	case types.Array:
		if xs, ok := v.([]any); ok && t.Elem != nil {
			parts := make([]string, len(xs))
			for i, x := range xs {
				parts[i] = ValueString(x, *t.Elem, loc)
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
	case types.Row:
		if xs, ok := v.([]any); ok && len(xs) == len(t.Fields) {
			parts := make([]string, len(xs))
			for i, x := range xs {
				parts[i] = ValueString(x, t.Fields[i].Type, loc)
			}
			return "(" + strings.Join(parts, ", ") + ")"
		}
	case types.Multiset:
		if m, ok := v.(types.MultisetValue); ok && t.Elem != nil {
			parts := make([]string, len(m))
			for i, e := range m {
				parts[i] = ValueString(e.Elem, *t.Elem, loc) + "=" + strconv.FormatInt(e.Count, 10)
			}
			sort.Strings(parts) // Flink's order is its HashMap's; ours is made deterministic
			return "{" + strings.Join(parts, ", ") + "}"
		}
	case types.Map:
		if m, ok := v.(map[any]any); ok && t.Key != nil && t.Elem != nil {
			parts := make([]string, 0, len(m))
			for k, x := range m {
				parts = append(parts, ValueString(k, *t.Key, loc)+"="+ValueString(x, *t.Elem, loc))
			}
			sort.Strings(parts) // Flink's order is the map's; ours is made deterministic
			return "{" + strings.Join(parts, ", ") + "}"
		}
	}
	return untypedString(v)
}

// untypedString prints a value by its Go type alone.
func untypedString(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case bool:
		if x {
			return "TRUE"
		}
		return "FALSE"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return javaFloat(x, 64)
	case decimal.Decimal:
		return x.String()
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		return types.FormatTimestamp(x, 0)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = untypedString(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[any]any:
		parts := make([]string, 0, len(x))
		for k, e := range x {
			parts = append(parts, untypedString(k)+"="+untypedString(e))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	case types.MultisetValue:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = untypedString(e.Elem) + "=" + strconv.FormatInt(e.Count, 10)
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	}
	return fmt.Sprint(v)
}

// showValue prints a value for an error message: strings quoted.
func showValue(v any) string {
	s, ok := v.(string)
	if !ok {
		return untypedString(v)
	}
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return "'" + s + "'"
}

// javaFloat prints f as Java's Double.toString (bits 64) or
// Float.toString (bits 32): plain notation with at least one fractional
// digit for 1e-3 <= |f| < 1e7, otherwise d.dddE±n; the shortest digits
// that read back as f.
func javaFloat(f float64, bits int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	mant, expStr, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, bits), "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, _ := strconv.Atoi(expStr)
	if f >= 1e-3 && f < 1e7 {
		var ip, fp string
		if exp >= 0 {
			for len(digits) < exp+1 {
				digits += "0"
			}
			ip, fp = digits[:exp+1], digits[exp+1:]
		} else {
			ip, fp = "0", strings.Repeat("0", -exp-1)+digits
		}
		if fp == "" {
			fp = "0"
		}
		return sign + ip + "." + fp
	}
	fp := digits[1:]
	if fp == "" {
		fp = "0"
	}
	return sign + digits[:1] + "." + fp + "E" + strconv.Itoa(exp)
}
