package format

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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
	if row, ok := c.decodeFast(data); ok {
		return row, nil
	}
	return c.decodeSlow(data)
}

// plainDelimiter tells whether the delimiter is one ASCII byte that
// encoding/csv accepts, which the fast paths need.
func (c *CSV) plainDelimiter() bool {
	d := c.Delimiter
	return d > 0 && d < utf8.RuneSelf && d != '"' && d != '\r' && d != '\n'
}

// decodeFast reads a line without quotes or line breaks, as
// encoding/csv would read it; ok is false for any other line and for a
// field that does not parse (unless IgnoreParseErrors), which
// decodeSlow then reads (and reports).
func (c *CSV) decodeFast(data []byte) ([]any, bool) {
	if len(data) == 0 || !c.plainDelimiter() || bytes.IndexAny(data, "\"\r\n") >= 0 ||
		bytes.Count(data, []byte{byte(c.Delimiter)})+1 != len(c.Fields) {
		return nil, false
	}
	line := string(data)
	out := make([]any, len(c.Fields))
	for i, f := range c.Fields {
		s := line
		if j := strings.IndexByte(line, byte(c.Delimiter)); j >= 0 {
			s, line = line[:j], line[j+1:]
		}
		if s == "" && !f.Type.IsString() && f.Type.Kind != types.Bytes {
			continue
		}
		v, ok := fastScalar(s, f.Type)
		if !ok {
			var err error
			if v, err = csvField(s, f.Type); err != nil {
				if !c.IgnoreParseErrors {
					return nil, false
				}
				v = nil
			}
		}
		out[i] = v
	}
	return out, true
}

// decodeSlow reads a line through encoding/csv: the lines decodeFast
// leaves, and the errors.
func (c *CSV) decodeSlow(data []byte) ([]any, error) {
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
	return c.AppendEncode(make([]byte, 0, 24*len(fields)), fields)
}

// AppendEncode implements Appender: the line without its line break, as
// encoding/csv writes it.
func (c *CSV) AppendEncode(dst []byte, fields []any) ([]byte, error) {
	if !c.plainDelimiter() {
		line, err := c.encodeSlow(fields)
		return append(dst, line...), err
	}
	for i, v := range fields {
		if i > 0 {
			dst = append(dst, byte(c.Delimiter))
		}
		start := len(dst)
		dst = c.appendText(dst, v, c.Fields[i].Type)
		if _, integer := v.(int64); integer && !isNumberByte(byte(c.Delimiter)) {
			continue // digits and '-' never need quotes
		}
		if c.needsQuotes(dst[start:]) {
			dst = quoteField(dst, start)
		}
	}
	return dst, nil
}

// appendText appends c.text(v, t).
func (c *CSV) appendText(buf []byte, v any, t types.Type) []byte {
	switch x := v.(type) {
	case string:
		return append(buf, x...)
	case int64:
		return strconv.AppendInt(buf, x, 10)
	case bool:
		return strconv.AppendBool(buf, x)
	case decimal.Decimal:
		return appendNumber(buf, x, c.PlainDecimals)
	case time.Time:
		if out, ok := appendTimeText(buf, x, t); ok {
			return out
		}
	}
	return append(buf, c.text(v, t)...)
}

// needsQuotes is encoding/csv's rule for the field f (with a one-byte
// delimiter).
func (c *CSV) needsQuotes(f []byte) bool {
	if len(f) == 0 {
		return false
	}
	if string(f) == `\.` {
		return true
	}
	d := byte(c.Delimiter)
	if len(f) >= 32 {
		// Long text (Nexmark's extra): four vectorised scans beat one
		// byte-by-byte pass.
		if bytes.IndexByte(f, d) >= 0 || bytes.IndexByte(f, '"') >= 0 || bytes.IndexByte(f, '\n') >= 0 || bytes.IndexByte(f, '\r') >= 0 {
			return true
		}
	} else {
		for _, b := range f { // one pass; bytes.IndexAny's set lookup cost more per field
			if b == d || b == '"' || b == '\r' || b == '\n' {
				return true
			}
		}
	}
	r, _ := utf8.DecodeRune(f)
	return unicode.IsSpace(r)
}

// isNumberByte reports whether b may appear in an integer's text.
func isNumberByte(b byte) bool { return b == '-' || (b >= '0' && b <= '9') }

// quoteField quotes the field at buf[start:] as encoding/csv does: in
// double quotes, each quote doubled.
func quoteField(buf []byte, start int) []byte {
	field := string(buf[start:])
	buf = append(buf[:start], '"')
	for i := 0; i < len(field); i++ {
		if field[i] == '"' {
			buf = append(buf, '"')
		}
		buf = append(buf, field[i])
	}
	return append(buf, '"')
}

// encodeSlow writes a line through encoding/csv, for a delimiter the
// fast path does not take.
func (c *CSV) encodeSlow(fields []any) ([]byte, error) {
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

// checkCSVTypes refuses a MULTISET column, which Flink's csv format has
// no form for (its CsvRowSchemaConverter takes no MULTISET either).
func checkCSVTypes(fields []types.Field) error {
	for _, f := range fields {
		if f.Type.Kind == types.Multiset {
			return fmt.Errorf("format csv: column %q is %s, which the csv format cannot read or write (Flink's cannot either): use the json format",
				f.Name, f.Type)
		}
	}
	return nil
}
