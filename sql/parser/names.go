package parser

import "strings"

// Names is what a node's SQL text can name: every identifier and
// keyword-like word (each part of a qualified name counts), and the
// tables whose every column a t.* takes. The planner prunes the columns
// a query names nowhere (column pruning): reading the canonical text,
// which Format prints for every construct, it misses no place a name
// can stand in.
type Names struct {
	// Words are the identifiers and words, lower-cased.
	Words map[string]bool
	// StarOf are the qualifiers of t.* (its last part), lower-cased.
	StarOf map[string]bool
	// Uses counts each word's occurrences; TableArgs those right after
	// TABLE (a window TVF's TABLE t), lower-cased.
	Uses, TableArgs map[string]int
}

// Add adds what o names to n (the names of several statements).
func (n *Names) Add(o Names) {
	for w := range o.Words {
		n.Words[w] = true
	}
	for w := range o.StarOf {
		n.StarOf[w] = true
	}
	for w, c := range o.Uses {
		n.Uses[w] += c
	}
	for w, c := range o.TableArgs {
		n.TableArgs[w] += c
	}
}

// NewNames returns Names holding nothing, to Add to.
func NewNames() Names {
	return Names{Words: map[string]bool{}, StarOf: map[string]bool{}, Uses: map[string]int{}, TableArgs: map[string]int{}}
}

// NamesOf returns the names n's SQL text holds.
func NamesOf(n Node) Names {
	out := NewNames()
	toks := lex(Format(n))
	for i, t := range toks {
		switch {
		case t.kind == tIdent || t.kind == tQuoted:
			w := strings.ToLower(t.text)
			out.Words[w] = true
			out.Uses[w]++
			if i > 0 && toks[i-1].kind == tIdent && toks[i-1].upper == "TABLE" {
				out.TableArgs[w]++
			}
		case t.kind == tPunct && t.text == "." && i > 0 && i+1 < len(toks) && toks[i+1].kind == tPunct && toks[i+1].text == "*":
			out.StarOf[strings.ToLower(toks[i-1].text)] = true
		}
	}
	return out
}
