package format

import (
	"bytes"
	"encoding/json"
	"sync"
	"unicode/utf8"

	"github.com/weirstream/weir/types"
)

// The json-family decoders read a message in two passes over its bytes,
// without building a map of it: jsonScan checks the syntax and finds
// where each wanted member's value lies (a span); the row is then read
// from the spans. The scan is only a fast path: a message it does not
// take (a syntax error, a key with escapes, deep nesting) is decoded the
// old way, through encoding/json, which then also writes the error. So
// every message decodes exactly as encoding/json reads it.

// span is where one JSON value lies in a message: data[start:end]. The
// zero span is a missing member.
type span struct{ start, end int }

func (s span) missing() bool { return s.end == 0 }

// maxScanDepth bounds the nesting the fast path skips through; deeper
// messages go the encoding/json way (which has its own limit).
const maxScanDepth = 100

// jsonScan is a cursor over a message.
type jsonScan struct {
	data  []byte
	i     int
	depth int
}

func (s *jsonScan) ws() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace, 0 at the end.
func (s *jsonScan) peek() byte {
	s.ws()
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// value skips one value and returns its span; ok is false on anything
// the fast path leaves to encoding/json.
func (s *jsonScan) value() (sp span, ok bool) {
	c := s.peek()
	start := s.i
	switch {
	case c == '{':
		ok = s.skipObject()
	case c == '[':
		ok = s.skipArray()
	case c == '"':
		ok = s.str()
	case c == '-' || c >= '0' && c <= '9':
		ok = s.number()
	case c == 't':
		ok = s.literal("true")
	case c == 'f':
		ok = s.literal("false")
	case c == 'n':
		ok = s.literal("null")
	}
	return span{start, s.i}, ok
}

func (s *jsonScan) literal(lit string) bool {
	if !bytes.HasPrefix(s.data[s.i:], []byte(lit)) {
		return false
	}
	s.i += len(lit)
	return true
}

// str skips a string.
func (s *jsonScan) str() bool {
	for s.i++; s.i < len(s.data); s.i++ {
		switch c := s.data[s.i]; {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			if !s.escape() {
				return false
			}
		case c < 0x20:
			return false
		}
	}
	return false
}

// escape checks the escape at s.i (the backslash) and leaves s.i on its
// last byte.
func (s *jsonScan) escape() bool {
	if s.i+1 >= len(s.data) {
		return false
	}
	s.i++
	switch s.data[s.i] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if s.i+4 >= len(s.data) {
			return false
		}
		for _, h := range s.data[s.i+1 : s.i+5] {
			if !isHex(h) {
				return false
			}
		}
		s.i += 4
		return true
	}
	return false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// number skips a number of JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (s *jsonScan) number() bool {
	if s.data[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.data) && s.data[s.i] == '0':
		s.i++
	case !s.digits():
		return false
	}
	if s.i < len(s.data) && s.data[s.i] == '.' {
		s.i++
		if !s.digits() {
			return false
		}
	}
	if s.i < len(s.data) && (s.data[s.i] == 'e' || s.data[s.i] == 'E') {
		s.i++
		if s.i < len(s.data) && (s.data[s.i] == '+' || s.data[s.i] == '-') {
			s.i++
		}
		return s.digits()
	}
	return true
}

// digits skips one or more decimal digits.
func (s *jsonScan) digits() bool {
	start := s.i
	for s.i < len(s.data) && s.data[s.i] >= '0' && s.data[s.i] <= '9' {
		s.i++
	}
	return s.i > start
}

func (s *jsonScan) enter() bool {
	s.depth++
	return s.depth <= maxScanDepth
}

func (s *jsonScan) skipArray() bool {
	if !s.enter() {
		return false
	}
	s.i++
	if s.peek() == ']' {
		s.i++
		s.depth--
		return true
	}
	for {
		if _, ok := s.value(); !ok {
			return false
		}
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

func (s *jsonScan) skipObject() bool {
	return s.members(func([]byte, span) {})
}

// members reads the object at s.i, calling member for each key (its raw
// bytes) and value. ok is false for a key with escapes or bytes beyond
// ASCII (encoding/json would unescape or repair it) and for anything
// else the fast path leaves to encoding/json.
func (s *jsonScan) members(member func(key []byte, v span)) bool {
	if s.peek() != '{' || !s.enter() {
		return false
	}
	s.i++
	if s.peek() == '}' {
		s.i++
		s.depth--
		return true
	}
	for {
		key, ok := s.key()
		if !ok {
			return false
		}
		v, ok := s.value()
		if !ok {
			return false
		}
		member(key, v)
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			s.depth--
			return true
		default:
			return false
		}
	}
}

// key reads `"key":`; see members.
func (s *jsonScan) key() ([]byte, bool) {
	if s.peek() != '"' {
		return nil, false
	}
	start := s.i + 1
	for s.i = start; s.i < len(s.data); s.i++ {
		switch c := s.data[s.i]; {
		case c == '"':
			key := s.data[start:s.i]
			s.i++
			if s.peek() != ':' {
				return nil, false
			}
			s.i++
			return key, true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// fieldSpans scans the object at sp.start and returns the span of each of fields' members, the last
// when a key repeats (as encoding/json's map keeps the last). index maps
// a name to its place in fields.
func fieldSpans(data []byte, sp span, index map[string]int, out []span) bool {
	s := jsonScan{data: data, i: sp.start}
	clear(out)
	return s.members(func(key []byte, v span) {
		if i, ok := index[string(key)]; ok {
			out[i] = v
		}
	})
}

// spanString is the string value at sp (a JSON string), unescaped as
// encoding/json does.
func spanString(data []byte, sp span) string {
	raw := data[sp.start+1 : sp.end-1]
	if plainString(raw) {
		return string(raw)
	}
	var str string
	_ = json.Unmarshal(data[sp.start:sp.end], &str) // the scan checked its syntax
	return str
}

// plainString tells whether raw, between a string's quotes, is its value.
func plainString(raw []byte) bool {
	ascii := true
	for _, c := range raw {
		if c == '\\' {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.Valid(raw)
}

// spanAny is the value at sp as encoding/json decodes it with UseNumber
// (nil for null), for what the fast path does not read itself.
func spanAny(data []byte, sp span) any {
	switch data[sp.start] {
	case 'n':
		return nil
	case 't':
		return true
	case 'f':
		return false
	case '"':
		return spanString(data, sp)
	case '{', '[':
		dec := json.NewDecoder(bytes.NewReader(data[sp.start:sp.end]))
		dec.UseNumber()
		var v any
		_ = dec.Decode(&v) // the scan checked its syntax
		return v
	}
	return json.Number(data[sp.start:sp.end])
}

// nameIndex maps each field's name to its place, made on first use.
type nameIndex struct {
	once sync.Once
	m    map[string]int
}

func (x *nameIndex) of(fields []types.Field) map[string]int {
	x.once.Do(func() {
		x.m = make(map[string]int, len(fields))
		for i, f := range fields {
			x.m[f.Name] = i
		}
	})
	return x.m
}

// spansFor returns n spans, in buf when it is large enough.
func spansFor(buf []span, n int) []span {
	if n <= len(buf) {
		return buf[:n]
	}
	return make([]span, n)
}

// rowFromSpans reads the fields whose values lie at spans; path is where
// the object lies, for errors.
func (std TimestampStandard) rowFromSpans(data []byte, spans []span, fields []types.Field, path string) ([]any, error) {
	out := make([]any, len(fields))
	for i, f := range fields {
		if spans[i].missing() {
			continue
		}
		v, err := std.spanValue(data, spans[i], f.Type, path, f.Name)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// spanValue reads the value at sp as type t: plain scalars by the fast
// readers, the rest as fromJSON reads encoding/json's value. The path
// (path+name) is built only for an error.
func (std TimestampStandard) spanValue(data []byte, sp span, t types.Type, path, name string) (any, error) {
	switch c := data[sp.start]; {
	case c == 'n':
		return nil, nil
	case t.Kind == types.Row || t.Kind == types.Array || t.Kind == types.Map || c == '{' || c == '[':
	case c == '"':
		if raw := data[sp.start+1 : sp.end-1]; t.Kind == types.Timestamp || t.Kind == types.TimestampLTZ {
			if v, ok := std.parseTimestamp(raw, t.Kind == types.TimestampLTZ); ok {
				return v, nil
			}
		} else if plainString(raw) {
			if v, ok := fastScalar(raw, t); ok {
				return v, nil
			}
		}
	case c == 't' || c == 'f':
		if t.Kind == types.Boolean {
			return c == 't', nil
		}
	default:
		if v, ok := fastNumber(data[sp.start:sp.end], t); ok {
			return v, nil
		}
	}
	return std.fromJSON(spanAny(data, sp), t, path+name)
}

// elements calls element for each value of the array at sp (its syntax
// checked); false when sp is not an array.
func elements(data []byte, sp span, element func(v span) bool) bool {
	if sp.missing() || data[sp.start] != '[' {
		return false
	}
	s := jsonScan{data: data, i: sp.start + 1}
	if s.peek() == ']' {
		return true
	}
	for {
		v, _ := s.value()
		if !element(v) {
			return false
		}
		if s.peek() == ']' {
			return true
		}
		s.i++ // the comma
	}
}

// isString tells whether sp holds a JSON string.
func isString(data []byte, sp span) bool { return !sp.missing() && data[sp.start] == '"' }

// rawString is the bytes between the quotes of the string at sp, as
// written (escapes kept): compared with a plain name, it matches only
// when the string is that name written plainly.
func rawString(data []byte, sp span) []byte {
	if !isString(data, sp) {
		return nil
	}
	return data[sp.start+1 : sp.end-1]
}
