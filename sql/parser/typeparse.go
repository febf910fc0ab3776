package parser

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"time"

	"github.com/weirstream/weir/types"
)

// Defaults of Flink's type system for types written without a length or
// precision (FlinkTypeSystem): VARCHAR and VARBINARY are unbounded, CHAR is
// 1, TIMESTAMP is microseconds, DECIMAL is (10, 0).
const (
	defaultTimestampPrecision = 6
	defaultDecimalPrecision   = 10
	maxDecimalPrecision       = 38
	maxLength                 = math.MaxInt32
)

var typeNames = []string{"BOOLEAN", "TINYINT", "SMALLINT", "INT", "INTEGER", "BIGINT", "FLOAT",
	"REAL", "DOUBLE", "DECIMAL", "DEC", "NUMERIC", "CHAR", "CHARACTER", "VARCHAR", "STRING",
	"BINARY", "VARBINARY", "BYTES", "DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "ARRAY", "MAP", "ROW", "MULTISET"}

// parseType reads a data type and an optional NOT NULL / NULL, then any
// postfix ARRAY (INT ARRAY is ARRAY<INT>).
func (p *parser) parseType() types.Type {
	defer p.enter()()
	t := p.parseBaseType()
	p.parseNullability(&t)
	for p.isWord("ARRAY") && !p.isPunctAt(1, "<") {
		p.next()
		elem := t
		t = types.Type{Kind: types.Array, Nullable: true, Elem: &elem}
		p.parseNullability(&t)
	}
	return t
}

func (p *parser) parseNullability(t *types.Type) {
	if p.acceptWords("NOT", "NULL") {
		t.Nullable = false
	} else if p.acceptWord("NULL") {
		t.Nullable = true
	}
}

func (p *parser) parseBaseType() types.Type {
	tok := p.cur()
	if tok.kind != tIdent {
		p.failExpected("a data type", "")
	}
	p.next()
	t := types.Type{Nullable: true}
	switch tok.upper {
	case "BOOLEAN":
		t.Kind = types.Boolean
	case "TINYINT":
		t.Kind = types.TinyInt
	case "SMALLINT":
		t.Kind = types.SmallInt
	case "INT", "INTEGER":
		t.Kind = types.Int
	case "BIGINT":
		t.Kind = types.BigInt
	case "FLOAT", "REAL":
		t.Kind = types.Float
	case "DOUBLE":
		p.acceptWord("PRECISION")
		t.Kind = types.Double
	case "DECIMAL", "DEC", "NUMERIC":
		p.parseDecimal(&t)
	case "CHAR", "CHARACTER", "VARCHAR", "STRING":
		p.parseCharType(&t, tok.upper)
	case "BINARY", "VARBINARY", "BYTES":
		// types.Bytes has no length; a declared length is checked, then dropped.
		if tok.upper != "BYTES" {
			p.parseLength(tok.upper+" length", 1, maxLength)
		}
		t.Kind = types.Bytes
	case "DATE":
		t.Kind = types.Date
	case "TIME":
		// TIME(p), p 0 to 9, default 0, as Flink; WITHOUT TIME ZONE is
		// the only kind there is.
		t.Kind = types.Time
		t.Precision = p.parseLength("TIME precision", 0, 9, 0)
		p.acceptWords("WITHOUT", "TIME", "ZONE")
	case "TIMESTAMP":
		p.parseTimestamp(&t)
	case "TIMESTAMP_LTZ":
		t.Kind = types.TimestampLTZ
		t.Precision = p.parseLength("TIMESTAMP_LTZ precision", 0, 9, defaultTimestampPrecision)
	case "ARRAY", "MULTISET":
		t.Kind = types.Array
		if tok.upper == "MULTISET" {
			t.Kind = types.Multiset
		}
		open := p.expectAngle(tok.upper)
		elem := p.parseType()
		t.Elem = &elem
		p.expectClose(">", open, tok.upper+"<…>")
	case "MAP":
		p.parseMap(&t)
	case "ROW":
		p.parseRow(&t)
	default:
		p.failUnknownType(tok)
	}
	return t
}

func (p *parser) failUnknownType(tok token) {
	switch tok.upper {
	case "RAW", "INTERVAL", "NULL", "SYMBOL", "STRUCTURED_TYPE", "VARIANT":
		p.fail(tok.pos, "", "type %s is not supported", tok.upper)
	}
	hint := ""
	if kw, ok := closest(tok.text, typeNames); ok {
		hint = "did you mean " + kw + "?"
	}
	p.fail(tok.pos, hint, "unknown data type '%s'", tok.text)
}

// parseLength reads an optional "(n)" with lo <= n <= hi; def is returned
// when there is none. what names n in errors ("CHAR length").
func (p *parser) parseLength(what string, lo, hi int, def ...int) int {
	if !p.isPunct("(") {
		if len(def) > 0 {
			return def[0]
		}
		return 0
	}
	open := p.next().pos
	n := p.parseIntIn(what, lo, hi)
	p.expectClose(")", open, what)
	return n
}

func (p *parser) parseIntIn(what string, lo, hi int) int {
	t := p.cur()
	if t.kind != tNumber {
		p.failExpected("an integer", "")
	}
	n, err := strconv.Atoi(t.text)
	if err != nil || n < lo || n > hi {
		p.fail(t.pos, "", "%s %s is out of range [%d, %d]", what, t.raw, lo, hi)
	}
	p.next()
	return n
}

func (p *parser) parseDecimal(t *types.Type) {
	t.Kind, t.Precision, t.Scale = types.Decimal, defaultDecimalPrecision, 0
	if !p.isPunct("(") {
		return
	}
	open := p.next().pos
	t.Precision = p.parseIntIn("DECIMAL precision", 1, maxDecimalPrecision)
	if p.acceptPunct(",") {
		t.Scale = p.parseIntIn("DECIMAL scale", 0, t.Precision)
	}
	p.expectClose(")", open, "DECIMAL precision")
}

func (p *parser) parseCharType(t *types.Type, word string) {
	switch word {
	case "STRING":
		t.Kind = types.String
	case "CHAR", "CHARACTER":
		if p.acceptWord("VARYING") {
			word = "VARCHAR"
			break
		}
		t.Kind = types.Char
		t.Precision = p.parseLength("CHAR length", 1, maxLength, 1)
		return
	}
	if word == "VARCHAR" {
		// VARCHAR without a length is unbounded in Flink, i.e. STRING.
		t.Kind, t.Precision = types.Varchar, p.parseLength("VARCHAR length", 1, maxLength, maxLength)
		if t.Precision == maxLength {
			t.Kind, t.Precision = types.String, 0
		}
	}
}

func (p *parser) parseTimestamp(t *types.Type) {
	t.Kind = types.Timestamp
	t.Precision = p.parseLength("TIMESTAMP precision", 0, 9, defaultTimestampPrecision)
	switch {
	case p.acceptWords("WITHOUT", "TIME", "ZONE"):
	case p.acceptWords("WITH", "LOCAL", "TIME", "ZONE"):
		t.Kind = types.TimestampLTZ
	case p.isWord("WITH") && p.isWordAt(1, "TIME") && p.isWordAt(2, "ZONE"):
		p.fail(p.cur().pos, "use TIMESTAMP_LTZ(p) (WITH LOCAL TIME ZONE)", "TIMESTAMP WITH TIME ZONE is not supported")
	}
}

func (p *parser) expectAngle(typ string) Pos {
	if !p.isPunct("<") {
		p.failExpected("'<' after "+typ, fmt.Sprintf("write %s<…>", typ))
	}
	return p.next().pos
}

func (p *parser) parseMap(t *types.Type) {
	t.Kind = types.Map
	open := p.expectAngle("MAP")
	k := p.parseType()
	p.expectPunct(",")
	v := p.parseType()
	t.Key, t.Elem = &k, &v
	p.expectClose(">", open, "MAP<…>")
}

// parseRow reads ROW<name type, …> or ROW(name type, …).
func (p *parser) parseRow(t *types.Type) {
	t.Kind = types.Row
	closer := ")"
	if p.isPunct("<") {
		closer = ">"
	} else if !p.isPunct("(") {
		p.failExpected("'<' or '(' after ROW", "write ROW<name type, …>")
	}
	open := p.next().pos
	seen := map[string]bool{}
	for {
		pos := p.cur().pos
		name := p.parseIdent("field name")
		if seen[name] {
			p.fail(pos, "", "duplicate field '%s' in ROW", name)
		}
		seen[name] = true
		t.Fields = append(t.Fields, types.Field{Name: name, Type: p.parseType()})
		if p.cur().kind == tString { // a field description: accepted, not kept
			p.next()
		}
		if !p.acceptPunct(",") {
			break
		}
	}
	if tok := p.cur(); isIdentTok(tok) {
		p.fail(tok.pos, "missing ',' between fields?", "expected ',' or '%s' after ROW field, found %s", closer, tok.describe())
	}
	p.expectClose(closer, open, "ROW"+map[string]string{")": "(…)", ">": "<…>"}[closer])
}

// ---------------------------------------------------------------- literals

var (
	dateRe      = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})$`)
	timeRe      = regexp.MustCompile(`^(\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d{1,9})?)?$`)
	timestampRe = regexp.MustCompile(`^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2})(\.\d{1,9})?)?$`)
)

func (p *parser) parseTypedLit() Expr {
	t := p.next()
	v := p.next()
	lit := &TypedLit{Pos: t.pos, Value: v.text}
	var ok bool
	var format string
	switch t.upper {
	case "DATE":
		lit.Kind, format = DateLit, "yyyy-mm-dd"
		m := dateRe.FindStringSubmatch(v.text)
		ok = m != nil && validDate(m[1], m[2], m[3])
	case "TIME":
		lit.Kind, format = TimeLit, "hh:mm:ss[.fff]"
		m := timeRe.FindStringSubmatch(v.text)
		ok = m != nil && validClock(m[1], m[2], m[3])
	default:
		lit.Kind, format = TimestampLit, "yyyy-mm-dd hh:mm:ss[.fff]"
		m := timestampRe.FindStringSubmatch(v.text)
		ok = m != nil && validDate(m[1], m[2], m[3]) && validClock(m[4], m[5], m[6])
	}
	if !ok {
		p.fail(v.pos, "write "+t.upper+" '"+format+"'", "invalid %s literal %s", t.upper, v.raw)
	}
	return lit
}

func validDate(y, m, d string) bool {
	yi, _ := strconv.Atoi(y)
	mi, _ := strconv.Atoi(m)
	di, _ := strconv.Atoi(d)
	tm := time.Date(yi, time.Month(mi), di, 0, 0, 0, 0, time.UTC)
	return tm.Year() == yi && int(tm.Month()) == mi && tm.Day() == di
}

func validClock(h, m, s string) bool {
	hi, _ := strconv.Atoi(h)
	mi, _ := strconv.Atoi(m)
	si, _ := strconv.Atoi(s) // "" reads as 0
	return hi < 24 && mi < 60 && si < 60
}

var intervalUnits = map[string]TimeUnit{
	"YEAR": Year, "YEARS": Year, "MONTH": Month, "MONTHS": Month, "DAY": Day, "DAYS": Day,
	"HOUR": Hour, "HOURS": Hour, "MINUTE": Minute, "MINUTES": Minute, "SECOND": Second, "SECONDS": Second,
}

// intervalFormats are the value formats of INTERVAL literals, by unit range.
var intervalFormats = map[[2]TimeUnit]struct {
	re      *regexp.Regexp
	example string
}{
	{Year, NoUnit}:   {regexp.MustCompile(`^[+-]?\d+$`), "'2' YEAR"},
	{Month, NoUnit}:  {regexp.MustCompile(`^[+-]?\d+$`), "'3' MONTH"},
	{Day, NoUnit}:    {regexp.MustCompile(`^[+-]?\d+$`), "'1' DAY"},
	{Hour, NoUnit}:   {regexp.MustCompile(`^[+-]?\d+$`), "'1' HOUR"},
	{Minute, NoUnit}: {regexp.MustCompile(`^[+-]?\d+$`), "'5' MINUTE"},
	{Second, NoUnit}: {regexp.MustCompile(`^[+-]?\d+(\.\d+)?$`), "'10' SECOND"},
	{Year, Month}:    {regexp.MustCompile(`^[+-]?\d+-\d+$`), "'1-6' YEAR TO MONTH"},
	{Day, Hour}:      {regexp.MustCompile(`^[+-]?\d+ \d+$`), "'1 12' DAY TO HOUR"},
	{Day, Minute}:    {regexp.MustCompile(`^[+-]?\d+ \d+:\d+$`), "'1 2:03' DAY TO MINUTE"},
	{Day, Second}:    {regexp.MustCompile(`^[+-]?\d+ \d+:\d+:\d+(\.\d+)?$`), "'1 2:03:04.5' DAY TO SECOND"},
	{Hour, Minute}:   {regexp.MustCompile(`^[+-]?\d+:\d+$`), "'2:30' HOUR TO MINUTE"},
	{Hour, Second}:   {regexp.MustCompile(`^[+-]?\d+:\d+:\d+(\.\d+)?$`), "'2:30:00' HOUR TO SECOND"},
	{Minute, Second}: {regexp.MustCompile(`^[+-]?\d+:\d+(\.\d+)?$`), "'5:30' MINUTE TO SECOND"},
}

// parseInterval reads INTERVAL 'value' unit[(p)] [TO unit[(p)]].
func (p *parser) parseInterval() Expr {
	lit := &IntervalLit{Pos: p.next().pos}
	v := p.cur()
	if v.kind != tString {
		hint := "write INTERVAL '5' MINUTE"
		if v.kind == tNumber {
			hint = fmt.Sprintf("quote the value: INTERVAL '%s' …", v.text)
		}
		p.failExpected("a 'quoted' interval value", hint)
	}
	p.next()
	lit.Value = v.text
	lit.From, lit.FromPrecision = p.parseIntervalUnit(v)
	if p.acceptWord("TO") {
		lit.To, lit.ToPrecision = p.parseIntervalUnit(v)
	}
	f, ok := intervalFormats[[2]TimeUnit{lit.From, lit.To}]
	if !ok {
		p.fail(lit.Pos, "", "invalid interval range %s TO %s", lit.From, lit.To)
	}
	if !f.re.MatchString(lit.Value) {
		p.fail(v.pos, "write e.g. INTERVAL "+f.example, "invalid INTERVAL value %s for %s", v.raw, unitRange(lit))
	}
	return lit
}

func unitRange(l *IntervalLit) string {
	if l.To == NoUnit {
		return l.From.String()
	}
	return l.From.String() + " TO " + l.To.String()
}

func (p *parser) parseIntervalUnit(value token) (TimeUnit, int) {
	t := p.cur()
	u, ok := intervalUnits[t.upper]
	if t.kind != tIdent || !ok {
		hint := "write INTERVAL '5' MINUTE"
		if m := regexp.MustCompile(`^\s*(\d+)\s*([A-Za-z]+)\s*$`).FindStringSubmatch(value.text); m != nil && t.kind != tIdent {
			if unit, ok := intervalUnits[upper(m[2])]; ok {
				hint = fmt.Sprintf("write INTERVAL '%s' %s", m[1], unit)
			}
		}
		p.failExpected("an interval unit (YEAR, MONTH, DAY, HOUR, MINUTE or SECOND)", hint)
	}
	p.next()
	prec := 0
	if p.isPunct("(") {
		open := p.next().pos
		prec = p.parseIntIn("interval precision", 1, 10)
		p.expectClose(")", open, "interval precision")
	}
	return u, prec
}
