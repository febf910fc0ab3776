package format

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/types"
)

// CSV is Flink's csv format: one line per row, fields by position. An empty
// field is NULL for columns other than strings and BYTES (an empty BYTES
// field is zero bytes, as Flink reads it, so zero bytes survive a round
// trip).
type CSV struct {
	Fields    []types.Field
	Delimiter rune
	// PlainDecimals writes DECIMALs without scientific notation (Flink's
	// 'csv.write-bigdecimal-in-scientific-notation' = 'false'); default:
	// as BigDecimal.toString ("1E+2").
	PlainDecimals bool
	// IgnoreParseErrors reads a field that does not parse as NULL
	// (Flink's 'csv.ignore-parse-errors'); a malformed line is still an
	// error, which the connector skips under the same option.
	IgnoreParseErrors bool
}

// Decode implements Format. A field that is not of its column's type is
// an *Error naming the column (or NULL with IgnoreParseErrors), as in
// Flink's CsvToRowDataConverters; see ParseScalar for what each type
// accepts. BYTES are base64, as Flink writes and reads them.
func (c *CSV) Decode(data []byte) ([]any, error) {
	r := csv.NewReader(bytes.NewReader(data))
	r.Comma = c.Delimiter
	r.FieldsPerRecord = -1
	rec, err := r.Read()
	if err != nil {
		return nil, csvReadError(err)
	}
	if len(rec) != len(c.Fields) {
		return nil, &Error{Format: "csv", Err: fmt.Errorf("%d fields, the table has %d columns", len(rec), len(c.Fields))}
	}
	out := make([]any, len(rec))
	for i, s := range rec {
		f := c.Fields[i]
		if s == "" && !f.Type.IsString() && f.Type.Kind != types.Bytes {
			continue
		}
		v, err := csvField(s, f.Type)
		switch {
		case err == nil:
			out[i] = v
		case !c.IgnoreParseErrors:
			return nil, &Error{Format: "csv", Column: f.Name, Type: f.Type.String(), Err: err}
		}
	}
	return out, nil
}

// csvReadError drops encoding/csv's line number: Decode reads one record
// on its own, so that number is always 1 and would contradict the caller's
// (the file's line, the Kafka offset). The column stays.
func csvReadError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		err = fmt.Errorf("column %d: %w", pe.Column, pe.Err)
	}
	return &Error{Format: "csv", Err: err}
}

func csvField(s string, t types.Type) (any, error) {
	if t.Kind != types.Bytes {
		return ParseScalar(s, t)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64 (BYTES are written and read as base64): %v", err)
	}
	return b, nil
}

// Encode implements Format.
func (c *CSV) Encode(fields []any) ([]byte, error) {
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = c.Delimiter
	rec := make([]string, len(fields))
	for i, v := range fields {
		rec[i] = c.text(v, c.Fields[i].Type)
	}
	if err := w.Write(rec); err != nil {
		return nil, err
	}
	w.Flush()
	return []byte(strings.TrimRight(buf.String(), "\n")), w.Error()
}

// text writes one field as Flink's csv format does: DECIMAL, DATE and
// TIMESTAMP as formatNumber and formatTime say, BYTES as base64, NULL as
// an empty field.
func (c *CSV) text(v any, t types.Type) string {
	switch x := v.(type) {
	case decimal.Decimal:
		return formatNumber(x, c.PlainDecimals)
	case time.Time:
		if s, ok := formatTime(x, t); ok {
			return s
		}
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	}
	return FormatScalar(v)
}
