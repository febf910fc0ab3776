package expr

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
)

// pattern compiles a regular expression argument once when it is a
// constant and otherwise caches the last pattern seen, which suits the
// usual case of a column holding few distinct patterns. Go's RE2 syntax
// is Java's without backreferences and lookaround.
type pattern struct {
	konst *regexp.Regexp
	// simple is konst's faster matcher, when it has one (simpleRE).
	simple *simpleRE
	last   atomic.Pointer[compiledRE]
	conv   func(string) string // rewrites the pattern before compiling
}

type compiledRE struct {
	src string
	re  *regexp.Regexp
	err error
}

// newPattern prepares argument i of a call; a constant pattern that does
// not compile is a compile error.
func newPattern(args []*Compiled, i int, conv func(string) string) (*pattern, error) {
	p := &pattern{conv: conv}
	if v, ok := constArg(args, i); ok && v != nil {
		s, _ := v.(string)
		re, err := p.compile(s)
		if err != nil {
			return nil, errAt(args[i].Src, "invalid regular expression %s: %v", showValue(s), err)
		}
		p.konst = re
		src := s
		if conv != nil {
			src = conv(s)
		}
		p.simple = newSimpleRE(src)
	}
	return p, nil
}

func (p *pattern) compile(s string) (*regexp.Regexp, error) {
	if p.conv != nil {
		s = p.conv(s)
	}
	re, err := regexp.Compile(s)
	if err != nil {
		msg := err.Error()
		if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "error parsing regexp") {
			msg = msg[i+2:]
		}
		return nil, fmt.Errorf("%s (lookaround and backreferences are not supported)", msg)
	}
	return re, nil
}

// get returns the compiled form of s.
func (p *pattern) get(s string) (*regexp.Regexp, error) {
	if p.konst != nil {
		return p.konst, nil
	}
	if c := p.last.Load(); c != nil && c.src == s {
		return c.re, c.err
	}
	re, err := p.compile(s)
	p.last.Store(&compiledRE{src: s, re: re, err: err})
	return re, err
}

// javaReplacement turns a Java replacement string ($1, \$) into Go's
// template syntax (${1}, $$).
func javaReplacement(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		ch := r[i]
		switch {
		case ch == '\\' && i+1 < len(r):
			i++
			if r[i] == '$' {
				b.WriteString("$$")
			} else {
				b.WriteByte(r[i])
			}
		case ch == '$' && i+1 < len(r) && r[i+1] >= '0' && r[i+1] <= '9':
			j := i + 1
			for j < len(r) && r[j] >= '0' && r[j] <= '9' {
				j++
			}
			b.WriteString("${" + r[i+1:j] + "}")
			i = j - 1
		case ch == '$' && i+1 < len(r) && r[i+1] == '{':
			end := strings.IndexByte(r[i:], '}')
			if end < 0 {
				b.WriteString("$$")
				continue
			}
			b.WriteString(r[i : i+end+1])
			i += end
		case ch == '$':
			b.WriteString("$$")
		default:
			b.WriteByte(ch)
		}
	}
	return b.String()
}
