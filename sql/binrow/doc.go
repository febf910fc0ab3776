// Package binrow is the binary row format of the SQL layer (Flink's
// BinaryRowData, Go-shaped): a row of known field types as one []byte
// that is read field by field without boxing into any, compared and
// hashed on its bytes, and kept in state as it is.
//
// A row of n fields is laid out as
//
//	null bits    ceil(n/8) bytes; bit i set: field i is NULL
//	tail bits    ceil(n/8) bytes; bit i set: field i's slot points into the tail
//	slots        n × 8 bytes, little-endian
//	tail         variable-length data, in field order
//
// A slot holds the value itself for fixed-width values: BOOLEAN as 0 or 1;
// TINYINT … BIGINT as an int64; FLOAT and DOUBLE as float64 bits;
// DECIMAL(p ≤ 18, s) as the int64 unscaled value at scale s; DATE, TIME,
// TIMESTAMP and TIMESTAMP_LTZ as Unix epoch nanoseconds. A slot whose tail
// bit is set holds the offset (low 32 bits, from the row's first byte) and
// length (high 32 bits) of the value in the tail: always for CHAR, VARCHAR,
// STRING and BYTES (the bytes) and for DECIMAL(p > 18) (sign byte, int32
// exponent, magnitude); for a DECIMAL(p ≤ 18) value not at scale s or
// beyond 18 digits, and for a time outside epoch nanoseconds' years
// 1678–2262 (int64 seconds, uint32 nanoseconds), when they occur. The
// fallbacks keep every value exact: a row decodes to the values it was
// built from, with their decimal scales and instants (in UTC).
//
// Two rows of one Layout are equal as SQL values (IS NOT DISTINCT FROM)
// when their bytes are equal, but for three exceptions: -0.0 and 0.0
// differ, NaNs of one bit pattern are equal, and a decimal not at its
// type's scale (which package types never gives: FitDecimal) differs from
// the equal one at it.
//
// ARRAY, MAP and ROW fields are not supported yet (Supports reports
// false): their operators keep rows as []any.
package binrow
