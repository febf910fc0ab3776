package filesystem

import (
	"fmt"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/types"
)

// DefaultPartitionName is Flink's 'partition.default-name': the directory
// value of a NULL or empty partition value.
const DefaultPartitionName = "__DEFAULT_PARTITION__"

// escapePathName escapes s as Flink's PartitionPathUtils.escapePathName
// does: control characters and "#%'*/:=?\{[]^ and DEL become %XX (upper
// case hex); everything else stays.
func escapePathName(s string) string {
	i := 0
	for i < len(s) && !escapedByte[s[i]] {
		i++
	}
	if i == len(s) {
		return s // most values: nothing to escape, nothing to allocate
	}
	var b strings.Builder
	for _, r := range s {
		if needsEscaping(r) {
			fmt.Fprintf(&b, "%%%02X", r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func needsEscaping(r rune) bool {
	return r < ' ' || r == 0x7F || strings.ContainsRune(escapedSpecials, r)
}

const escapedSpecials = "\"#%'*/:=?\\{[]^"

// escapedByte says which bytes needsEscaping escapes (none of a multi-byte
// rune's: they are all 0x80 or more).
var escapedByte = func() (t [256]bool) {
	for c := range 0x80 {
		t[c] = needsEscaping(rune(c))
	}
	return t
}()

// PartitionPath returns the Hive-style relative directory of one row's
// partition values: col=value/… in the order of cols, names and values
// escaped, a NULL or empty value written as defaultName.
func PartitionPath(cols []string, values []any, defaultName string) string {
	return partitionDir(cols, partitionStrings(values, nil, defaultName))
}

// partitionStrings are the directory values (unescaped) of values, of
// the SQL types ts (nil: unknown).
func partitionStrings(values []any, ts []types.Type, defaultName string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		var t *types.Type
		if i < len(ts) {
			t = &ts[i]
		}
		out[i] = partitionValue(v, t)
		if out[i] == "" {
			out[i] = defaultName
		}
	}
	return out
}

func partitionDir(cols, values []string) string {
	parts := make([]string, len(cols))
	for i, c := range cols {
		parts[i] = escapePathName(c) + "=" + escapePathName(values[i])
	}
	return strings.Join(parts, "/")
}

// partitionValue renders a partition column's value of SQL type t (nil:
// unknown) as its directory value, as Flink's partition computer does
// (the value's Java toString): strings as they are, a DATE as 2024-01-01,
// a TIME as 10:15:30, DOUBLE and FLOAT as Java prints them (0.0, 1.0E10),
// a DECIMAL with its scale (1.00). Timestamps differ: Flink's
// LocalDateTime.toString (2024-01-01T10:15) would be too odd for a path,
// so they are SQL text (yyyy-MM-dd HH:mm:ss[.fff]).
func partitionValue(v any, t *types.Type) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		switch {
		case t != nil && t.Kind == types.Date:
			return types.FormatDate(x)
		case t != nil && t.Kind == types.Time:
			return types.FormatTime(x.UTC(), 0)
		}
		return x.Format("2006-01-02 15:04:05.999999999")
	case float64:
		if t != nil && t.Kind == types.Float {
			return format.JavaFloat(x)
		}
		return format.JavaDouble(x)
	case decimal.Decimal:
		return format.FormatDecimal(x)
	case fmt.Stringer:
		return x.String()
	default:
		return fmt.Sprint(x)
	}
}

// unescapePathName reverses escapePathName: %XX becomes the byte XX.
func unescapePathName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			var c byte
			if _, err := fmt.Sscanf(s[i+1:i+3], "%02X", &c); err == nil {
				b.WriteByte(c)
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// partitionOf parses the partition directory rel (col=value/…) of a file
// into its values, unescaped, in the order of cols.
func partitionOf(rel string, cols []string) ([]string, error) {
	parts := strings.Split(rel, "/")
	if len(parts) != len(cols) {
		return nil, fmt.Errorf("directory %q is not a partition of (%s)", rel, strings.Join(cols, ", "))
	}
	out := make([]string, len(cols))
	for i, p := range parts {
		name, value, ok := strings.Cut(p, "=")
		if !ok || unescapePathName(name) != cols[i] {
			return nil, fmt.Errorf("directory %q is not a partition of (%s): want %s=…", rel, strings.Join(cols, ", "), cols[i])
		}
		out[i] = unescapePathName(value)
	}
	return out, nil
}
