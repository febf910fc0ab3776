package expr

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// simpleRE matches the small class of regular expressions that a
// sequence of literals, anchors and captures describes, with at most one
// repetition of a character class at its very end — the shape of
// Nexmark q21's '(&|^)channel_id=([^&]*)' and of most key=value
// extractions — without Go's general engines: it jumps to the places a
// match can start (strings.IndexAny) and tries each as a backtracking
// implementation would. Since Go's regexp returns the match such a
// backtracking search finds first (leftmost, then first alternative,
// then greedy), simpleRE returns exactly what regexp returns; any other
// pattern is left to regexp (newSimpleRE returns nil).
type simpleRE struct {
	items []reItem
	ncap  int // capture groups, as regexp's NumSubexp
	// Where a match can start: at 0 when atStart, and at a byte of
	// firstBytes; anywhere when firstBytes is "" and !onlyAtStart.
	atStart, onlyAtStart bool
	firstBytes           string
}

type reOp uint8

const (
	reLit      reOp = iota // lit
	reClass                // one character of class
	reRepeat               // min..max (max -1: unbounded) characters of class, greedy; last item only
	reBegin                // beginning of text
	reEnd                  // end of text
	reAlt                  // the first of alts that matches (alts are single items)
	reCapStart             // capture group cap starts
	reCapEnd               // capture group cap ends
	reEmpty                // nothing
	reAnyNotNL             // one character other than a newline
)

type reItem struct {
	op       reOp
	lit      string
	class    []rune // ranges lo, hi as syntax.Regexp.Rune
	min, max int
	alts     []reItem
	cap      int
}

// maxSimpleAlts bounds the alternatives simpleRE takes in one group.
const maxSimpleAlts = 8

// newSimpleRE returns the simple matcher of the Perl-syntax pattern src
// (as regexp.Compile reads it), nil when it is not of the simple class.
func newSimpleRE(src string) *simpleRE {
	re, err := syntax.Parse(src, syntax.Perl)
	if err != nil {
		return nil
	}
	m := &simpleRE{ncap: re.MaxCap()}
	if !m.add(re.Simplify()) || !m.repeatLast() {
		return nil
	}
	m.starts()
	return m
}

// add appends re's items; false when re is outside the class.
func (m *simpleRE) add(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			if !m.add(sub) {
				return false
			}
		}
		return true
	case syntax.OpCapture:
		m.items = append(m.items, reItem{op: reCapStart, cap: re.Cap})
		if !m.add(re.Sub[0]) {
			return false
		}
		m.items = append(m.items, reItem{op: reCapEnd, cap: re.Cap})
		return true
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		return m.addRepeat(re)
	case syntax.OpAlternate:
		alt := reItem{op: reAlt}
		for _, sub := range re.Sub {
			it, ok := atom(sub)
			if !ok || len(re.Sub) > maxSimpleAlts {
				return false
			}
			alt.alts = append(alt.alts, it)
		}
		m.items = append(m.items, alt)
		return true
	}
	it, ok := atom(re)
	m.items = append(m.items, it)
	return ok
}

// atom is a single item: a literal, one character, an anchor.
func atom(re *syntax.Regexp) (reItem, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		lit := string(re.Rune)
		// Case folding, and U+FFFD (which regexp also finds where the
		// text is not valid UTF-8), are left to regexp.
		return reItem{op: reLit, lit: lit}, re.Flags&syntax.FoldCase == 0 && !strings.ContainsRune(lit, utf8.RuneError)
	case syntax.OpCharClass:
		return reItem{op: reClass, class: re.Rune}, true
	case syntax.OpAnyCharNotNL:
		return reItem{op: reAnyNotNL}, true
	case syntax.OpBeginText:
		return reItem{op: reBegin}, true
	case syntax.OpEndText:
		return reItem{op: reEnd}, true
	case syntax.OpEmptyMatch:
		return reItem{op: reEmpty}, true
	}
	return reItem{}, false
}

// addRepeat appends a greedy repetition of one character class.
func (m *simpleRE) addRepeat(re *syntax.Regexp) bool {
	if re.Flags&syntax.NonGreedy != 0 {
		return false
	}
	it := reItem{op: reRepeat, max: -1}
	switch sub := re.Sub[0]; {
	case sub.Op == syntax.OpCharClass:
		it.class = sub.Rune
	case sub.Op == syntax.OpAnyCharNotNL:
		it.class = []rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}
	case sub.Op == syntax.OpLiteral && len(sub.Rune) == 1 && sub.Flags&syntax.FoldCase == 0:
		it.class = []rune{sub.Rune[0], sub.Rune[0]}
	default:
		return false
	}
	switch re.Op {
	case syntax.OpPlus:
		it.min = 1
	case syntax.OpQuest:
		it.max = 1
	case syntax.OpRepeat:
		it.min, it.max = re.Min, re.Max
	}
	m.items = append(m.items, it)
	return true
}

// repeatLast checks that only capture ends and the end of text follow a
// repetition: then the greedy repetition's longest run is the one a
// backtracking search takes first, and if the rest fails there (the
// text goes on), it fails after every shorter run too.
func (m *simpleRE) repeatLast() bool {
	for i, it := range m.items {
		if it.op != reRepeat {
			continue
		}
		for _, after := range m.items[i+1:] {
			if after.op != reCapEnd && after.op != reEnd {
				return false
			}
		}
	}
	return true
}

// starts works out where a match can start from the first item that is
// not a capture start.
func (m *simpleRE) starts() {
	for _, it := range m.items {
		switch it.op {
		case reCapStart:
			continue
		case reBegin:
			m.atStart, m.onlyAtStart = true, true
		case reLit:
			if it.lit[0] < utf8.RuneSelf { // IndexAny reads its set as runes
				m.firstBytes = it.lit[:1]
			}
		case reAlt:
			m.altStarts(it.alts)
		}
		return
	}
}

// altStarts is starts for an alternation of literals and beginnings.
func (m *simpleRE) altStarts(alts []reItem) {
	var first []byte
	for _, a := range alts {
		switch {
		case a.op == reBegin:
			m.atStart = true
		case a.op == reLit && a.lit[0] < utf8.RuneSelf:
			first = append(first, a.lit[0])
		default:
			m.atStart, first = false, nil // a match can start anywhere
			return
		}
	}
	m.firstBytes = string(first)
	m.onlyAtStart = len(first) == 0
}

// submatch returns the match's group boundaries as
// regexp.FindStringSubmatchIndex does (nil for no match), into caps
// when it has room.
func (m *simpleRE) submatch(s string, caps []int) []int {
	n := 2 * (m.ncap + 1)
	if cap(caps) < n {
		caps = make([]int, n)
	}
	caps = caps[:n]
	for p := 0; p <= len(s); {
		if p > 0 || !m.atStart {
			if m.onlyAtStart {
				return nil
			}
			if m.firstBytes != "" {
				i := strings.IndexAny(s[p:], m.firstBytes)
				if i < 0 {
					return nil
				}
				p += i
			}
		}
		for i := range caps {
			caps[i] = -1
		}
		if end, ok := m.match(s, 0, p, caps); ok {
			caps[0], caps[1] = p, end
			return caps
		}
		if p == len(s) {
			return nil
		}
		_, w := utf8.DecodeRuneInString(s[p:])
		p += w
	}
	return nil
}

// match tries items[i:] at pos, in the order a backtracking search
// does; end is where the match ends.
func (m *simpleRE) match(s string, i, pos int, caps []int) (end int, ok bool) {
	if i == len(m.items) {
		return pos, true
	}
	it := &m.items[i]
	switch it.op {
	case reCapStart, reCapEnd:
		slot := 2 * it.cap
		if it.op == reCapEnd {
			slot++
		}
		old := caps[slot]
		caps[slot] = pos
		if end, ok := m.match(s, i+1, pos, caps); ok {
			return end, true
		}
		caps[slot] = old
		return 0, false
	case reRepeat:
		next, ok := it.repeat(s, pos)
		if !ok {
			return 0, false
		}
		return m.match(s, i+1, next, caps)
	case reAlt:
		for a := range it.alts {
			if next, ok := it.alts[a].step(s, pos); ok {
				if end, ok := m.match(s, i+1, next, caps); ok {
					return end, true
				}
			}
		}
		return 0, false
	}
	next, ok := it.step(s, pos)
	if !ok {
		return 0, false
	}
	return m.match(s, i+1, next, caps)
}

// step matches a single item at pos.
func (it *reItem) step(s string, pos int) (int, bool) {
	switch it.op {
	case reLit:
		return pos + len(it.lit), strings.HasPrefix(s[pos:], it.lit)
	case reClass, reAnyNotNL:
		if pos == len(s) {
			return 0, false
		}
		r, w := utf8.DecodeRuneInString(s[pos:])
		if it.op == reAnyNotNL {
			return pos + w, r != '\n'
		}
		return pos + w, inClass(r, it.class)
	case reBegin:
		return pos, pos == 0
	case reEnd:
		return pos, pos == len(s)
	}
	return pos, true // reEmpty
}

// repeat takes the longest run of the class at pos, up to max
// characters; ok is false when it is shorter than min.
func (it *reItem) repeat(s string, pos int) (int, bool) {
	n := 0
	for pos < len(s) && (it.max < 0 || n < it.max) {
		r, w := utf8.DecodeRuneInString(s[pos:])
		if !inClass(r, it.class) {
			break
		}
		pos += w
		n++
	}
	return pos, n >= it.min
}

func inClass(r rune, class []rune) bool {
	for i := 0; i+1 < len(class); i += 2 {
		if r < class[i] {
			return false
		}
		if r <= class[i+1] {
			return true
		}
	}
	return false
}
