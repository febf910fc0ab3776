package expr

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

func init() {
	register("UPPER LOWER INITCAP", 1, 1, "STRING", caseFunc)
	register("CHAR_LENGTH CHARACTER_LENGTH", 1, 1, "STRING", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famString); err != nil {
			return nil, err
		}
		return fn(call, a, intType(false), func(v []any) (any, error) {
			return int64(utf8.RuneCountInString(v[0].(string))), nil
		}), nil
	})
	register("TRIM", 1, 3, "[BOTH|LEADING|TRAILING] [chars] FROM s", trimFunc)
	register("LTRIM RTRIM", 1, 2, "STRING[, chars]", trimFunc)
	register("SUBSTRING SUBSTR", 2, 3, "STRING, INT[, INT]", substrFunc)
	register("REPLACE", 3, 3, "STRING, STRING, STRING", strFunc(famString, func(v []any) (any, error) {
		return strings.ReplaceAll(v[0].(string), v[1].(string), v[2].(string)), nil
	}))
	register("CONCAT", 1, -1, "STRING, …", strFunc(famString, func(v []any) (any, error) {
		var b strings.Builder
		for _, s := range v {
			b.WriteString(s.(string))
		}
		return b.String(), nil
	}))
	register("CONCAT_WS", 1, -1, "separator, STRING, …", concatWS)
	register("POSITION", 2, 2, "s1 IN s2", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		return locate(call, a, 1, 0)
	})
	register("INSTR", 2, 4, "STRING, STRING[, start[, nth]]", instr)
	register("LOCATE", 2, 3, "needle, STRING[, start]", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		return locate(call, a, 1, 0)
	})
	register("SPLIT_INDEX", 3, 3, "STRING, separator, INT", splitIndex)
	register("REGEXP", 2, 2, "STRING, regex", regexpFunc)
	register("REGEXP_EXTRACT", 2, 3, "STRING, regex[, group]", regexpExtract)
	register("REGEXP_REPLACE", 3, 3, "STRING, regex, replacement", regexpReplace)
	register("LPAD RPAD", 3, 3, "STRING, INT, pad", padFunc)
	register("REPEAT", 2, 2, "STRING, INT", repeatFunc)
	register("REVERSE", 1, 1, "STRING", strFunc(famString, func(v []any) (any, error) {
		r := []rune(v[0].(string))
		for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
			r[i], r[j] = r[j], r[i]
		}
		return string(r), nil
	}))
	register("LEFT RIGHT", 2, 2, "STRING, INT", leftRight)
	register("MD5 SHA1 SHA224 SHA256 SHA384 SHA512", 1, 1, "STRING", hashFunc)
	register("SHA2", 2, 2, "STRING, bits", hashFunc)
	register("TO_BASE64", 1, 1, "STRING", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famStrOrBin); err != nil {
			return nil, err
		}
		return fn(call, a, stringType(false), func(v []any) (any, error) {
			return base64.StdEncoding.EncodeToString(bytesOf(v[0])), nil
		}), nil
	})
	register("FROM_BASE64", 1, 1, "STRING", strFunc(famString, func(v []any) (any, error) {
		b, err := base64.StdEncoding.DecodeString(v[0].(string))
		if err != nil {
			return nil, fmt.Errorf("FROM_BASE64: %s is not base64", showValue(v[0]))
		}
		return string(b), nil
	}))
	register("ASCII", 1, 1, "STRING", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famString); err != nil {
			return nil, err
		}
		return fn(call, a, intType(false), func(v []any) (any, error) {
			s := v[0].(string)
			if s == "" {
				return int64(0), nil
			}
			r, _ := utf8.DecodeRuneInString(s)
			return int64(r), nil
		}), nil
	})
	register("CHR", 1, 1, "INT", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famInteger); err != nil {
			return nil, err
		}
		return fn(call, a, stringType(true), func(v []any) (any, error) {
			n := v[0].(int64)
			if n < 0 {
				return nil, nil
			}
			return string(rune(n % 256)), nil
		}), nil
	})
	register("PARSE_URL", 2, 3, "url, part[, key]", parseURL)
	register("STR_TO_MAP", 1, 3, "STRING[, pairDelimiter, keyValueDelimiter]", strToMap)
	register("IS_ALPHA IS_DIGIT IS_DECIMAL", 1, 1, "STRING", isClass)
	register("BIN", 1, 1, "INTEGER", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, famInteger); err != nil {
			return nil, err
		}
		return fn(call, a, stringType(false), func(v []any) (any, error) {
			return strconv.FormatUint(uint64(v[0].(int64)), 2), nil
		}), nil
	})
	register("HEX", 1, 1, "INTEGER or STRING", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if a[0].Type.IsInteger() {
			return fn(call, a, stringType(false), func(v []any) (any, error) {
				return strings.ToUpper(strconv.FormatUint(uint64(v[0].(int64)), 16)), nil
			}), nil
		}
		if err := expect(call, a, famStrOrBin); err != nil {
			return nil, err
		}
		return fn(call, a, stringType(false), func(v []any) (any, error) {
			return strings.ToUpper(hex.EncodeToString(bytesOf(v[0]))), nil
		}), nil
	})
	register("TYPEOF", 1, 2, "value", func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if a[0] == nil {
			return nil, errAt(call, "TYPEOF takes a value")
		}
		return constant(call, stringType(false), withNull(a[0].Type, a[0].Type.Nullable).String()), nil
	})
}

// strFunc is a function of string arguments returning STRING.
func strFunc(f family, body func(v []any) (any, error)) func(*compiler, *parser.FuncCall, []*Compiled) (*Compiled, error) {
	return func(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
		if err := expect(call, a, f); err != nil {
			return nil, err
		}
		return fn(call, a, stringType(false), body), nil
	}
}

func bytesOf(v any) []byte {
	if b, ok := v.([]byte); ok {
		return b
	}
	return []byte(v.(string))
}

// caseFunc is UPPER, LOWER and INITCAP; they keep the argument's type.
func caseFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	t := plain(a[0].Type)
	if t.Kind == types.Null {
		t = stringType(true)
	}
	var f func(string) string
	switch call.Name {
	case "UPPER":
		f = javaUpper
	case "LOWER":
		f = javaLower
	default:
		f = initCap
	}
	if c := fnOverFirst(call, a, t, func([]any) func(any) (any, error) {
		return func(v any) (any, error) { return sameOrNew(v, f(v.(string))), nil }
	}); c != nil {
		if call.Name != "INITCAP" {
			c.caseMapped = &caseMapping{self: c, arg: a[0], upper: call.Name == "UPPER", f: f}
		}
		return c, nil
	}
	return fn(call, a, t, func(v []any) (any, error) { return f(v[0].(string)), nil }), nil
}

// caseMapping is what a Compiled that is UPPER(arg) or LOWER(arg) maps
// (self: a copy of that Compiled, whose Eval may differ, is not it).
// Nexmark q21 compares LOWER(channel) with four constants per row, each a
// new lowered string.
type caseMapping struct {
	self, arg *Compiled
	upper     bool
	f         func(string) string
}

// caseMappedOf is x's caseMapping, or nil.
func caseMappedOf(x *Compiled) *caseMapping {
	if m := x.caseMapped; m != nil && m.self == x {
		return m
	}
	return nil
}

// equal reports whether the mapping of s is want, without building it
// when s is ASCII (where UPPER and LOWER map byte by byte).
func (m *caseMapping) equal(s, want string) bool {
	if !isASCII(s) {
		return m.f(s) == want
	}
	if len(s) != len(want) {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case m.upper && 'a' <= b && b <= 'z':
			b -= 'a' - 'A'
		case !m.upper && 'A' <= b && b <= 'Z':
			b += 'a' - 'A'
		}
		if b != want[i] {
			return false
		}
	}
	return true
}

// equalsAny compiles UPPER/LOWER(arg) [NOT] IN (consts...) or = / <>
// one constant: consts are the constants' values (nil for NULL), not the
// negation. It returns nil when consts hold a value that is no string.
func (m *caseMapping) equalsAny(consts []any, not bool) func(row []any) (any, error) {
	var want []string
	sawNull := false
	for _, v := range consts {
		s, ok := v.(string)
		switch {
		case v == nil:
			sawNull = true
		case !ok:
			return nil
		default:
			want = append(want, s)
		}
	}
	arg := m.arg.Eval
	return func(row []any) (any, error) {
		v, err := arg(row)
		if err != nil || v == nil {
			return nil, err
		}
		s := v.(string)
		for _, w := range want {
			if m.equal(s, w) {
				return !not, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return not, nil
	}
}

// sameOrNew is s, or v itself when s is v's string unchanged (a mapping
// that changed nothing returns its argument), which then needs no new
// interface value.
func sameOrNew(v any, s string) any {
	if old := v.(string); len(old) == len(s) && unsafe.StringData(old) == unsafe.StringData(s) {
		return v
	}
	return s
}

// javaUpper and javaLower are Java's String.toUpperCase and toLowerCase,
// which Flink's UPPER and LOWER call: full Unicode case mapping, where
// one character may become several (straße → STRASSE) and a capital
// sigma ending a word lowers to ς. Go's strings.ToUpper maps rune by
// rune; ASCII takes it, the same and faster.
func javaUpper(s string) string {
	if isASCII(s) {
		return strings.ToUpper(s)
	}
	return cases.Upper(language.Und).String(s)
}

func javaLower(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	return cases.Lower(language.Und).String(s)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// initCap upper-cases the first letter of each word (a run of letters and
// digits) and lower-cases the rest.
func initCap(s string) string {
	var b strings.Builder
	inWord := false
	for _, r := range s {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case alnum && !inWord:
			b.WriteRune(unicode.ToUpper(r))
		case alnum:
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
		inWord = alnum
	}
	return b.String()
}

// trimFunc is TRIM([BOTH|LEADING|TRAILING] [chars] FROM s), LTRIM(s[,
// chars]) and RTRIM(s[, chars]); chars is a set of characters, a space by
// default.
func trimFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	side := "BOTH"
	switch call.Name {
	case "LTRIM":
		side = "LEADING"
	case "RTRIM":
		side = "TRAILING"
	}
	var s, chars *Compiled
	rest := a
	if call.Name == "TRIM" && keyword(call, 0) != "" {
		side = keyword(call, 0)
		rest = a[1:]
	}
	switch {
	case call.Name == "TRIM" && len(rest) == 2:
		chars, s = rest[0], rest[1]
	case call.Name == "TRIM" && len(rest) == 1:
		s = rest[0]
	case call.Name != "TRIM":
		s = rest[0]
		if len(rest) == 2 {
			chars = rest[1]
		}
	default:
		return nil, errAt(call, "malformed TRIM; write TRIM([BOTH|LEADING|TRAILING] [chars] FROM s)")
	}
	if side != "BOTH" && side != "LEADING" && side != "TRAILING" {
		return nil, errAt(call, "TRIM takes BOTH, LEADING or TRAILING, not %s", side)
	}
	args := []*Compiled{s}
	if chars != nil {
		args = append(args, chars)
	}
	if err := expect(call, args, famString); err != nil {
		return nil, err
	}
	left, right := side != "TRAILING", side != "LEADING"
	return fn(call, args, varying(s.Type), func(v []any) (any, error) {
		cut := " "
		if len(v) == 2 {
			cut = v[1].(string)
		}
		str := v[0].(string)
		in := func(r rune) bool { return strings.ContainsRune(cut, r) }
		if left {
			str = strings.TrimLeftFunc(str, in)
		}
		if right {
			str = strings.TrimRightFunc(str, in)
		}
		return str, nil
	}), nil
}

// varying is a string type made VARCHAR (Calcite's TO_VARYING).
func varying(t types.Type) types.Type {
	if t.Kind == types.Char {
		return types.Type{Kind: types.Varchar, Precision: t.Precision, Nullable: t.Nullable}
	}
	if !t.IsString() {
		return stringType(t.Nullable)
	}
	return plain(t)
}

// substrFunc is SUBSTRING(s FROM pos [FOR len]) with Flink's rules: pos
// counts from 1, a negative pos counts from the end, 0 means 1; a
// negative len gives NULL.
func substrFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString, famInteger); err != nil {
		return nil, err
	}
	t := varying(a[0].Type)
	if t.Kind == types.Null {
		t = stringType(true)
	}
	t.Nullable = true
	return fn(call, a, t, func(v []any) (any, error) {
		r := []rune(v[0].(string))
		pos := v[1].(int64)
		n := int64(len(r))
		length := n + 1
		if len(v) == 3 {
			length = v[2].(int64)
			if length < 0 {
				return nil, nil
			}
		}
		var start int64
		switch {
		case pos > 0:
			start = pos - 1
			if start >= n {
				return "", nil
			}
		case pos < 0:
			start = n + pos
			if start < 0 {
				return "", nil
			}
		}
		end := n
		if n-start >= length {
			end = start + length
		}
		return string(r[start:end]), nil
	}), nil
}

// concatWS is CONCAT_WS(sep, s…): NULL when sep is NULL, skipping NULL
// strings.
func concatWS(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	sep, rest := a[0], a[1:]
	return &Compiled{Type: stringType(sep.Type.Nullable), Const: allConst(a), Eval: func(row []any) (any, error) {
		s, err := sep.Eval(row)
		if err != nil || s == nil {
			return nil, err
		}
		parts := make([]string, 0, len(rest))
		for _, x := range rest {
			v, err := x.Eval(row)
			if err != nil {
				return nil, err
			}
			if v != nil {
				parts = append(parts, v.(string))
			}
		}
		return strings.Join(parts, s.(string)), nil
	}}, nil
}

// locate finds a needle in a haystack: POSITION(needle IN hay) and
// LOCATE(needle, hay[, start]) take the needle first (hayIdx 1), INSTR(hay,
// needle) second (hayIdx 0). The result counts characters from 1; 0 means
// not found.
func locate(call *parser.FuncCall, a []*Compiled, hayIdx, needleIdx int) (*Compiled, error) {
	fams := []family{famString, famString, famInteger}
	if err := expect(call, a, fams[:len(a)]...); err != nil {
		return nil, err
	}
	return fn(call, a, intType(false), func(v []any) (any, error) {
		hay, needle := v[hayIdx].(string), v[needleIdx].(string)
		from := int64(1)
		if len(v) == 3 {
			if from = v[2].(int64); from < 1 {
				return int64(0), nil
			}
		}
		r := []rune(hay)
		if from-1 > int64(len(r)) {
			return int64(0), nil
		}
		i := strings.Index(string(r[from-1:]), needle)
		if i < 0 {
			return int64(0), nil
		}
		return from + int64(utf8.RuneCountInString(string(r[from-1:])[:i])), nil
	}), nil
}

// splitIndex is SPLIT_INDEX(s, sep, i): the i-th (from 0) piece of s split
// at every sep, NULL when there is no such piece. An empty sep splits at
// spaces; an empty s has no pieces.
func splitIndex(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString, famString, famInteger); err != nil {
		return nil, err
	}
	if c := fnOverFirst(call, a, stringType(true), func(consts []any) func(any) (any, error) {
		sep, ok1 := consts[0].(string)
		i, ok2 := consts[1].(int64)
		if !ok1 || !ok2 {
			return nil
		}
		return func(v any) (any, error) { return splitPiece(v.(string), sep, i), nil }
	}); c != nil {
		return c, nil
	}
	return fn(call, a, stringType(true), func(v []any) (any, error) {
		return splitPiece(v[0].(string), v[1].(string), v[2].(int64)), nil
	}), nil
}

// splitPiece is SPLIT_INDEX's value: piece i of s, or nil.
func splitPiece(s, sep string, i int64) any {
	if i < 0 || s == "" {
		return nil
	}
	if sep == "" {
		sep = " "
	}
	for n := int64(0); ; n++ {
		var j int
		if len(sep) == 1 { // the usual '/': IndexByte without Index's dispatch on the length
			j = strings.IndexByte(s, sep[0])
		} else {
			j = strings.Index(s, sep)
		}
		if n == i {
			if j < 0 {
				return s
			}
			return s[:j]
		}
		if j < 0 {
			return nil
		}
		s = s[j+len(sep):]
	}
}

func regexpFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	p, err := newPattern(a, 1, nil)
	if err != nil {
		return nil, err
	}
	return fn(call, a, boolType(false), func(v []any) (any, error) {
		if p.simple != nil {
			var buf [8]int
			return p.simple.submatch(v[0].(string), buf[:0]) != nil, nil
		}
		re, err := p.get(v[1].(string))
		if err != nil {
			return nil, nil
		}
		return re.MatchString(v[0].(string)), nil
	}), nil
}

// regexpExtract is REGEXP_EXTRACT(s, re[, group]): the group (0 for the
// whole match, the default) of the first match, NULL when nothing matches,
// the group does not exist or did not take part.
func regexpExtract(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString, famString, famInteger); err != nil {
		return nil, err
	}
	p, err := newPattern(a, 1, nil)
	if err != nil {
		return nil, err
	}
	extract := func(s, pattern string, g int64) any {
		if p.simple != nil {
			var buf [8]int
			return extractGroup(s, g, p.simple.ncap, func(s string) []int { return p.simple.submatch(s, buf[:0]) })
		}
		re, err := p.get(pattern)
		if err != nil {
			return nil
		}
		return extractGroup(s, g, re.NumSubexp(), re.FindStringSubmatchIndex)
	}
	if c := fnOverFirst(call, a, stringType(true), func(consts []any) func(any) (any, error) {
		pattern, ok := consts[0].(string)
		g, ok2 := int64(0), true
		if len(consts) == 2 {
			g, ok2 = consts[1].(int64)
		}
		if !ok || !ok2 {
			return nil
		}
		return func(v any) (any, error) { return extract(v.(string), pattern, g), nil }
	}); c != nil {
		return c, nil
	}
	return fn(call, a, stringType(true), func(v []any) (any, error) {
		g := int64(0)
		if len(v) == 3 {
			g = v[2].(int64)
		}
		return extract(v[0].(string), v[1].(string), g), nil
	}), nil
}

// extractGroup is group g of find's match in s (find as regexp's
// FindStringSubmatchIndex), NULL when there is no match or no such
// group, or the group took no part.
func extractGroup(s string, g int64, groups int, find func(string) []int) any {
	if g < 0 || g > int64(groups) {
		return nil
	}
	m := find(s)
	if m == nil || m[2*g] < 0 {
		return nil
	}
	return s[m[2*g]:m[2*g+1]]
}

// regexpReplace is REGEXP_REPLACE(s, re, r), Java's replaceAll: $1 in r
// is a group.
func regexpReplace(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	p, err := newPattern(a, 1, nil)
	if err != nil {
		return nil, err
	}
	return fn(call, a, stringType(true), func(v []any) (any, error) {
		re, err := p.get(v[1].(string))
		if err != nil {
			return nil, nil
		}
		return re.ReplaceAllString(v[0].(string), javaReplacement(v[2].(string))), nil
	}), nil
}

// padFunc is LPAD and RPAD: pad s with pad to n characters, or cut it to
// n; NULL for a negative n or an empty pad.
func padFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString, famInteger, famString); err != nil {
		return nil, err
	}
	left := call.Name == "LPAD"
	return fn(call, a, stringType(true), func(v []any) (any, error) {
		s, n, pad := []rune(v[0].(string)), v[1].(int64), []rune(v[2].(string))
		if n < 0 || len(pad) == 0 {
			return nil, nil
		}
		if int64(len(s)) >= n {
			return string(s[:n]), nil
		}
		if n > 1<<24 {
			return nil, errors.New("padded string too long")
		}
		fill := make([]rune, 0, n-int64(len(s)))
		for int64(len(fill)) < n-int64(len(s)) {
			fill = append(fill, pad[len(fill)%len(pad)])
		}
		if left {
			return string(fill) + string(s), nil
		}
		return string(s) + string(fill), nil
	}), nil
}

func repeatFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString, famInteger); err != nil {
		return nil, err
	}
	return fn(call, a, stringType(false), func(v []any) (any, error) {
		s, n := v[0].(string), v[1].(int64)
		if n <= 0 || s == "" {
			return "", nil
		}
		if int64(len(s))*n > 1<<26 {
			return nil, errors.New("REPEAT result too long")
		}
		return strings.Repeat(s, int(n)), nil
	}), nil
}

func leftRight(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString, famInteger); err != nil {
		return nil, err
	}
	left := call.Name == "LEFT"
	return fn(call, a, stringType(false), func(v []any) (any, error) {
		r, n := []rune(v[0].(string)), v[1].(int64)
		if n <= 0 {
			return "", nil
		}
		if n >= int64(len(r)) {
			return string(r), nil
		}
		if left {
			return string(r[:n]), nil
		}
		return string(r[int64(len(r))-n:]), nil
	}), nil
}

// hashFunc is MD5, SHA1, SHA224, SHA256, SHA384, SHA512 and SHA2(s, bits):
// lower-case hex digests.
func hashFunc(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	fams := []family{famStrOrBin, famInteger}
	if err := expect(call, a, fams[:len(a)]...); err != nil {
		return nil, err
	}
	pick := func(name string, bits int64) (hash.Hash, bool) {
		switch {
		case name == "MD5":
			return md5.New(), true
		case name == "SHA1":
			return sha1.New(), true
		case name == "SHA224" || bits == 224:
			return sha256.New224(), true
		case name == "SHA256" || bits == 256 || bits == 0 && name == "SHA2":
			return sha256.New(), true
		case name == "SHA384" || bits == 384:
			return sha512.New384(), true
		case name == "SHA512" || bits == 512:
			return sha512.New(), true
		}
		return nil, false
	}
	return fn(call, a, stringType(len(a) == 2), func(v []any) (any, error) {
		var bits int64
		if len(v) == 2 {
			bits = v[1].(int64)
		}
		h, ok := pick(call.Name, bits)
		if !ok {
			return nil, nil // SHA2 with an unsupported length is NULL
		}
		h.Write(bytesOf(v[0]))
		return hex.EncodeToString(h.Sum(nil)), nil
	}), nil
}

// parseURL is PARSE_URL(url, part[, key]).
func parseURL(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	return fn(call, a, stringType(true), func(v []any) (any, error) {
		u, err := url.Parse(v[0].(string))
		if err != nil {
			return nil, nil
		}
		part := v[1].(string)
		var out string
		switch part {
		case "HOST":
			out = u.Hostname()
		case "PATH":
			out = u.EscapedPath()
		case "QUERY":
			if len(v) == 3 {
				q, err := url.ParseQuery(u.RawQuery)
				if err != nil || !q.Has(v[2].(string)) {
					return nil, nil
				}
				return q.Get(v[2].(string)), nil
			}
			out = u.RawQuery
		case "REF":
			out = u.EscapedFragment()
		case "PROTOCOL":
			out = u.Scheme
		case "AUTHORITY":
			out = u.Host
			if u.User != nil {
				out = u.User.String() + "@" + out
			}
		case "FILE":
			out = u.EscapedPath()
			if u.RawQuery != "" {
				out += "?" + u.RawQuery
			}
		case "USERINFO":
			if u.User == nil {
				return nil, nil
			}
			out = u.User.String()
		default:
			return nil, nil
		}
		if out == "" {
			return nil, nil
		}
		return out, nil
	}), nil
}

// strToMap is STR_TO_MAP(s[, pairDelim, kvDelim]); the delimiters are
// regular expressions, ',' and '=' by default.
func strToMap(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if len(a) == 2 {
		return nil, errAt(call, "STR_TO_MAP takes 1 or 3 arguments, got 2")
	}
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	pairs, err := newPattern(a, 1, nil)
	if err != nil {
		return nil, err
	}
	kvs, err := newPattern(a, 2, nil)
	if err != nil {
		return nil, err
	}
	k, e := stringType(false), stringType(true)
	t := types.Type{Kind: types.Map, Key: &k, Elem: &e}
	return fn(call, a, t, func(v []any) (any, error) {
		pd, kd := ",", "="
		if len(v) == 3 {
			pd, kd = v[1].(string), v[2].(string)
		}
		pre, err := pairs.get(pd)
		if err != nil {
			return nil, err
		}
		kre, err := kvs.get(kd)
		if err != nil {
			return nil, err
		}
		out := map[any]any{}
		for _, p := range pre.Split(v[0].(string), -1) {
			kv := kre.Split(p, 2)
			if len(kv) == 2 {
				out[kv[0]] = kv[1]
			} else {
				out[kv[0]] = nil
			}
		}
		return out, nil
	}), nil
}

var decimalRE = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$`)

// isClass is IS_ALPHA, IS_DIGIT and IS_DECIMAL; NULL gives FALSE.
func isClass(c *compiler, call *parser.FuncCall, a []*Compiled) (*Compiled, error) {
	if err := expect(call, a, famString); err != nil {
		return nil, err
	}
	test := func(s string) bool {
		switch call.Name {
		case "IS_DECIMAL":
			return decimalRE.MatchString(s)
		case "IS_ALPHA":
			return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsLetter(r) }) < 0
		}
		return s != "" && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsDigit(r) }) < 0
	}
	x := a[0]
	return &Compiled{Type: boolType(false), Const: x.Const, Eval: func(row []any) (any, error) {
		v, err := x.Eval(row)
		if err != nil || v == nil {
			return false, err
		}
		return test(v.(string)), nil
	}}, nil
}
