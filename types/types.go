// Package types is the row and type vocabulary: the logical types of Flink
// SQL that Weir supports and the Go values that carry them at run time. It
// is a leaf (it imports nothing of Weir's), so connectors' row formats and
// the SQL layer share it.
//
// Values in rows (event.Row.Fields) are, by type:
//
//	BOOLEAN                         bool
//	TINYINT SMALLINT INT BIGINT     int64
//	FLOAT DOUBLE                    float64
//	DECIMAL(p, s)                   decimal.Decimal (github.com/shopspring/decimal), exact,
//	                                with exactly s fractional digits (FitDecimal)
//	CHAR VARCHAR STRING             string
//	BYTES VARBINARY                 []byte
//	DATE                            time.Time at 00:00 UTC
//	TIME(p)                         time.Time on 1970-01-01 UTC, whole milliseconds (as Flink's
//	                                runtime, which keeps TIME as milliseconds of the day)
//	TIMESTAMP(p)                    time.Time in UTC, read as a wall-clock time (no zone)
//	TIMESTAMP_LTZ(p)                time.Time (an instant)
//	ARRAY<T>                        []any
//	MAP<K, V>                       map[any]any
//	ROW<…>                          []any
//	MULTISET<T>                     MultisetValue
//	NULL of any type                nil
package types

import (
	"fmt"
	"strings"
)

// Kind is a logical type's root.
type Kind int

// The kinds, as Flink's LogicalTypeRoot names them (BOOLEAN … NULL; String
// gives the SQL name). The package doc gives each kind's Go value in a row.
const (
	Boolean Kind = iota
	TinyInt
	SmallInt
	Int
	BigInt
	Float
	Double
	Decimal
	Char
	Varchar
	String
	Bytes
	Date
	Timestamp
	TimestampLTZ
	Array
	Map
	Row
	Null
	// Time is TIME(p), a wall-clock time of day. It comes last so that the
	// kinds before it keep their numbers.
	Time
	// Multiset is MULTISET<T>, a bag: Elem is T. It comes after Time for
	// the same reason.
	Multiset
)

var kindNames = [...]string{"BOOLEAN", "TINYINT", "SMALLINT", "INT", "BIGINT", "FLOAT", "DOUBLE",
	"DECIMAL", "CHAR", "VARCHAR", "STRING", "BYTES", "DATE", "TIMESTAMP", "TIMESTAMP_LTZ", "ARRAY", "MAP",
	"ROW", "NULL", "TIME", "MULTISET"}

// String implements fmt.Stringer.
func (k Kind) String() string { return kindNames[k] }

// Field is a named field of a ROW type (or a table's column).
type Field struct {
	Name string
	Type Type
}

// FieldTypes returns the types of fields, in order.
func FieldTypes(fields []Field) []Type {
	out := make([]Type, len(fields))
	for i, f := range fields {
		out[i] = f.Type
	}
	return out
}

// Type is a logical type.
type Type struct {
	Kind      Kind
	Nullable  bool
	Precision int // DECIMAL precision, CHAR/VARCHAR length, TIMESTAMP and TIME fractional digits
	Scale     int // DECIMAL scale
	// Elem is ARRAY's and MULTISET's element type, MAP's value type; Key
	// is MAP's key.
	Elem, Key *Type
	// Fields are ROW's fields.
	Fields []Field
	// TimeAttr marks a time attribute: "rowtime" (event time with a
	// watermark) or "proctime".
	TimeAttr string
}

// IsNumeric reports whether t is an integer, floating or decimal type.
func (t Type) IsNumeric() bool { return t.Kind >= TinyInt && t.Kind <= Decimal }

// IsInteger reports whether t is TINYINT, SMALLINT, INT or BIGINT.
func (t Type) IsInteger() bool { return t.Kind >= TinyInt && t.Kind <= BigInt }

// IsString reports whether t is CHAR, VARCHAR or STRING.
func (t Type) IsString() bool { return t.Kind == Char || t.Kind == Varchar || t.Kind == String }

// String prints t in Flink SQL syntax, e.g. "DECIMAL(18, 2) NOT NULL".
func (t Type) String() string {
	s := t.base()
	if t.TimeAttr == "rowtime" {
		s += " *ROWTIME*"
	} else if t.TimeAttr == "proctime" {
		s += " *PROCTIME*"
	}
	if !t.Nullable {
		s += " NOT NULL"
	}
	return s
}

// Base prints t without nullability and time attribute, e.g. "STRING".
func (t Type) Base() string { return t.base() }

func (t Type) base() string {
	switch t.Kind {
	case Decimal:
		return fmt.Sprintf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case Char, Varchar:
		return fmt.Sprintf("%s(%d)", t.Kind, t.Precision)
	case Timestamp, TimestampLTZ, Time:
		return fmt.Sprintf("%s(%d)", t.Kind, t.Precision)
	case Array:
		return fmt.Sprintf("ARRAY<%s>", t.Elem)
	case Map:
		return fmt.Sprintf("MAP<%s, %s>", t.Key, t.Elem)
	case Multiset:
		return fmt.Sprintf("MULTISET<%s>", t.Elem)
	case Row:
		parts := make([]string, len(t.Fields))
		for i, f := range t.Fields {
			parts[i] = fmt.Sprintf("`%s` %s", f.Name, f.Type)
		}
		return "ROW<" + strings.Join(parts, ", ") + ">"
	}
	return t.Kind.String()
}
