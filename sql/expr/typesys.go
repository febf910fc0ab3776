package expr

import (
	"github.com/weirstream/weir/types"
)

// MaxDecimalPrecision is the largest DECIMAL precision, as in Flink.
const MaxDecimalPrecision = types.MaxDecimalPrecision

// maxVarchar is the length of STRING, Flink's VARCHAR(2147483647).
const maxVarchar = 2147483647

func scalar(k types.Kind, nullable bool) types.Type { return types.Type{Kind: k, Nullable: nullable} }

func boolType(nullable bool) types.Type   { return scalar(types.Boolean, nullable) }
func intType(nullable bool) types.Type    { return scalar(types.Int, nullable) }
func bigintType(nullable bool) types.Type { return scalar(types.BigInt, nullable) }
func doubleType(nullable bool) types.Type { return scalar(types.Double, nullable) }
func stringType(nullable bool) types.Type {
	return types.Type{Kind: types.String, Nullable: nullable, Precision: maxVarchar}
}
func decimalType(p, s int, nullable bool) types.Type {
	return types.Type{Kind: types.Decimal, Precision: p, Scale: s, Nullable: nullable}
}
func timestampType(p int, nullable bool) types.Type {
	return types.Type{Kind: types.Timestamp, Precision: p, Nullable: nullable}
}
func timeType(p int, nullable bool) types.Type {
	return types.Type{Kind: types.Time, Precision: p, Nullable: nullable}
}
func ltzType(p int, nullable bool) types.Type {
	return types.Type{Kind: types.TimestampLTZ, Precision: p, Nullable: nullable}
}
func nullType() types.Type { return types.Type{Kind: types.Null, Nullable: true} }

// withNull returns t with Nullable set to n, dropping any time attribute:
// a derived value is no longer the table's time attribute.
func withNull(t types.Type, n bool) types.Type {
	t.Nullable = n
	t.TimeAttr = ""
	return t
}

// plain drops the time attribute of t.
func plain(t types.Type) types.Type {
	t.TimeAttr = ""
	return t
}

// isTemporal reports DATE, TIMESTAMP and TIMESTAMP_LTZ.
func isTemporal(t types.Type) bool {
	return t.Kind == types.Date || t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ
}

func isTimestamp(t types.Type) bool {
	return t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ
}

func isApprox(t types.Type) bool { return t.Kind == types.Float || t.Kind == types.Double }

// integerDigits is the DECIMAL precision that holds every value of an
// integer type, as Flink converts them: TINYINT 3, SMALLINT 5, INT 10,
// BIGINT 19.
func integerDigits(k types.Kind) int {
	switch k {
	case types.TinyInt:
		return 3
	case types.SmallInt:
		return 5
	case types.Int:
		return 10
	}
	return 19
}

// asDecimal returns the precision and scale of an exact numeric type.
func asDecimal(t types.Type) (p, s int) {
	if t.Kind == types.Decimal {
		return t.Precision, t.Scale
	}
	return integerDigits(t.Kind), 0
}

// adjustDecimal caps a derived DECIMAL at precision 38, giving up scale
// (down to at most 6 digits) to keep the integer digits, as Flink's
// LogicalTypeMerging.adjustPrecisionScale.
func adjustDecimal(p, s int) (int, int) {
	if p <= MaxDecimalPrecision {
		return p, s
	}
	intDigits := p - s
	minScale := min(s, 6)
	s = max(MaxDecimalPrecision-intDigits, minScale)
	return MaxDecimalPrecision, s
}

// decimalResult is the DECIMAL type of l op r for exact operands. fits
// reports that no cap applied, so every result fits the type; a capped
// result may overflow, which makes it NULL.
func decimalResult(op byte, l, r types.Type) (p, s int, fits bool) {
	p1, s1 := asDecimal(l)
	p2, s2 := asDecimal(r)
	switch op {
	case '+', '-':
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s + 1
	case '*':
		p, s = p1+p2, s1+s2
	case '/':
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
	case '%':
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
	}
	fits = p <= MaxDecimalPrecision
	p, s = adjustDecimal(p, s)
	return p, s, fits
}

// wider is the wider of two integer kinds.
func wider(a, b types.Kind) types.Kind {
	if a > b {
		return a
	}
	return b
}

// commonNumeric is the type both numeric types convert to without loss
// (as far as possible): the wider integer, a DECIMAL holding both, or an
// approximate type.
func commonNumeric(a, b types.Type) types.Type {
	n := a.Nullable || b.Nullable
	switch {
	case a.Kind == types.Double || b.Kind == types.Double:
		return doubleType(n)
	case a.Kind == types.Float || b.Kind == types.Float:
		if a.Kind == types.Decimal || b.Kind == types.Decimal {
			return doubleType(n)
		}
		return scalar(types.Float, n)
	case a.Kind == types.Decimal || b.Kind == types.Decimal:
		p1, s1 := asDecimal(a)
		p2, s2 := asDecimal(b)
		s := max(s1, s2)
		p := max(p1-s1, p2-s2) + s
		p, s = adjustDecimal(p, s)
		return decimalType(p, s, n)
	}
	return scalar(wider(a.Kind, b.Kind), n)
}

// leastRestrictive is the type all of ts convert to — the result type of
// CASE, COALESCE, IN lists, ARRAY[…] and UNION — or false when there is
// none. NULL joins any type; strings of different lengths widen to VARCHAR
// (Flink converts ragged CHAR unions to VARCHAR, so nothing is padded).
func leastRestrictive(ts []types.Type) (types.Type, bool) {
	var out types.Type
	have := false
	nullable := false
	for _, t := range ts {
		nullable = nullable || t.Nullable
		if t.Kind == types.Null {
			continue
		}
		if !have {
			out, have = plain(t), true
			continue
		}
		var ok bool
		if out, ok = join(out, t); !ok {
			return types.Type{}, false
		}
	}
	if !have {
		return nullType(), true
	}
	out.Nullable = nullable
	return out, true
}

// join is leastRestrictive for two non-NULL types.
func join(a, b types.Type) (types.Type, bool) {
	n := a.Nullable || b.Nullable
	switch {
	case a.IsNumeric() && b.IsNumeric():
		return commonNumeric(a, b), true
	case a.IsString() && b.IsString():
		return joinStrings(a, b, n), true
	case a.Kind == types.Time && b.Kind == types.Time:
		return timeType(max(a.Precision, b.Precision), n), true
	case isTemporal(a) && isTemporal(b):
		if a.Kind == types.Date && b.Kind == types.Date {
			return scalar(types.Date, n), true
		}
		k := types.Timestamp
		if a.Kind == types.TimestampLTZ || b.Kind == types.TimestampLTZ {
			k = types.TimestampLTZ
		}
		p := max(precisionOf(a), precisionOf(b))
		return types.Type{Kind: k, Precision: p, Nullable: n}, true
	case a.Kind != b.Kind:
		return types.Type{}, false
	case a.Kind == types.Array:
		e, ok := join(*a.Elem, *b.Elem)
		if !ok {
			return types.Type{}, false
		}
		e.Nullable = a.Elem.Nullable || b.Elem.Nullable
		return types.Type{Kind: types.Array, Elem: &e, Nullable: n}, true
	case a.Kind == types.Map:
		k, ok1 := join(*a.Key, *b.Key)
		v, ok2 := join(*a.Elem, *b.Elem)
		if !ok1 || !ok2 {
			return types.Type{}, false
		}
		v.Nullable = a.Elem.Nullable || b.Elem.Nullable
		return types.Type{Kind: types.Map, Key: &k, Elem: &v, Nullable: n}, true
	case a.Kind == types.Row:
		if len(a.Fields) != len(b.Fields) {
			return types.Type{}, false
		}
		fs := make([]types.Field, len(a.Fields))
		for i := range a.Fields {
			ft, ok := join(a.Fields[i].Type, b.Fields[i].Type)
			if !ok {
				return types.Type{}, false
			}
			ft.Nullable = a.Fields[i].Type.Nullable || b.Fields[i].Type.Nullable
			fs[i] = types.Field{Name: a.Fields[i].Name, Type: ft}
		}
		return types.Type{Kind: types.Row, Fields: fs, Nullable: n}, true
	case a.Kind == types.Bytes:
		return types.Type{Kind: types.Bytes, Precision: max(a.Precision, b.Precision), Nullable: n}, true
	}
	return withNull(a, n), true
}

func joinStrings(a, b types.Type, n bool) types.Type {
	la, lb := strLen(a), strLen(b)
	if a.Kind == types.Char && b.Kind == types.Char && la == lb {
		return types.Type{Kind: types.Char, Precision: la, Nullable: n}
	}
	l := max(la, lb)
	if l >= maxVarchar {
		return stringType(n)
	}
	return types.Type{Kind: types.Varchar, Precision: l, Nullable: n}
}

// strLen is the declared length of a string type; STRING and an unsized
// VARCHAR are unbounded.
func strLen(t types.Type) int {
	if t.Kind == types.String || t.Precision <= 0 {
		return maxVarchar
	}
	return t.Precision
}

// precisionOf is the fractional-second precision of a timestamp type; a
// DATE has none.
func precisionOf(t types.Type) int {
	if t.Kind == types.Date {
		return 0
	}
	return t.Precision
}

// sameType reports whether two types are equal apart from nullability and
// time attributes.
func sameType(a, b types.Type) bool {
	return withNull(a, false).String() == withNull(b, false).String()
}

// typeName prints t without NOT NULL, for messages.
func typeName(t types.Type) string {
	if t.Kind == types.Null {
		return "NULL"
	}
	return withNull(t, true).String()
}

func typeList(ts []types.Type) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += typeName(t)
	}
	return s
}

// LeastRestrictive is the type every one of ts converts to implicitly, as
// Calcite's leastRestrictive under Flink's type system: the result type of
// CASE, COALESCE and UNION, and of each column of VALUES. False when there
// is none (INT and STRING). NULL joins any type; CHARs of one length stay
// CHAR, of different lengths widen to VARCHAR (FlinkTypeSystem's
// shouldConvertRaggedUnionTypesToVarying), so nothing is padded.
func LeastRestrictive(ts []types.Type) (types.Type, bool) { return leastRestrictive(ts) }
