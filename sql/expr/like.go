package expr

import (
	"errors"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/weirstream/weir/sql/parser"
)

// like compiles x [NOT] LIKE pattern [ESCAPE e] and SIMILAR TO.
func (c *compiler) like(l *parser.Like) (*Compiled, error) {
	x, err := c.expr(l.X)
	if err != nil {
		return nil, err
	}
	p, err := c.expr(l.Pattern)
	if err != nil {
		return nil, err
	}
	args := []*Compiled{x, p}
	if l.Escape != nil {
		e, err := c.expr(l.Escape)
		if err != nil {
			return nil, err
		}
		args = append(args, e)
	}
	what := "LIKE"
	if l.Similar {
		what = "SIMILAR TO"
	}
	call := &parser.FuncCall{Pos: l.Pos, Name: what, Args: []parser.Expr{l.X, l.Pattern}}
	if l.Escape != nil {
		call.Args = append(call.Args, l.Escape)
	}
	if err := expect(call, args, famString); err != nil {
		return nil, err
	}
	escape := func(v []any) (rune, error) {
		if len(v) < 3 {
			return 0, nil
		}
		e := v[2].(string)
		if utf8.RuneCountInString(e) != 1 {
			return 0, errors.New("the ESCAPE string must be a single character")
		}
		r, _ := utf8.DecodeRuneInString(e)
		return r, nil
	}
	similar, not := l.Similar, l.Not
	if re, ok, err := constLike(args, similar, escape); err != nil {
		return nil, errAt(l.Pattern, "%v", err)
	} else if ok {
		return fn(call, args, boolType(false), func(v []any) (any, error) {
			return re.MatchString(v[0].(string)) != not, nil
		}), nil
	}
	pat := &pattern{}
	out := fn(call, args, boolType(false), func(v []any) (any, error) {
		esc, err := escape(v)
		if err != nil {
			return nil, err
		}
		src, err := likeToRegexp(v[1].(string), esc, similar)
		if err != nil {
			return nil, err
		}
		re, err := pat.get(src)
		if err != nil {
			return nil, err
		}
		return re.MatchString(v[0].(string)) != not, nil
	})
	return out, nil
}

// constLike compiles a constant pattern (and escape) once.
func constLike(args []*Compiled, similar bool, escape func([]any) (rune, error)) (*regexp.Regexp, bool, error) {
	pv, ok := constArg(args, 1)
	if !ok || pv == nil {
		return nil, false, nil
	}
	vals := []any{nil, pv}
	if len(args) == 3 {
		ev, ok := constArg(args, 2)
		if !ok || ev == nil {
			return nil, false, nil
		}
		vals = append(vals, ev)
	}
	esc, err := escape(vals)
	if err != nil {
		return nil, false, err
	}
	src, err := likeToRegexp(pv.(string), esc, similar)
	if err != nil {
		return nil, false, err
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, false, err
	}
	return re, true, nil
}

// likeToRegexp translates a LIKE pattern (% any string, _ any character)
// or a SIMILAR TO pattern (LIKE's wildcards plus regular-expression
// operators) into an anchored Go regular expression. esc, when not 0,
// makes the next character literal.
func likeToRegexp(p string, esc rune, similar bool) (string, error) {
	var b strings.Builder
	b.WriteString(`(?s)\A(?:`)
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case esc != 0 && r == esc:
			if i+1 >= len(rs) {
				return "", errors.New("the pattern ends with the escape character")
			}
			i++
			b.WriteString(regexp.QuoteMeta(string(rs[i])))
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteString(".")
		case similar && strings.ContainsRune("|*+?{}()[]", r):
			b.WriteRune(r)
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	b.WriteString(`)\z`)
	return b.String(), nil
}
