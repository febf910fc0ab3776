package mysqlcdc

import (
	"strings"
	"unicode"
)

// ddlTouches reports whether statement q, run with default database
// schema, drops, alters, truncates or renames the table schema.name (or
// drops its database). It reads only the statement's table list, so a
// statement about another table whose name merely contains this one's
// ("DROP TABLE bills_old" beside "bills") is not a change of it.
func ddlTouches(q, defaultSchema, schema, name string) bool {
	toks := ddlTokens(q)
	if len(toks) < 2 {
		return false
	}
	verb := strings.ToLower(toks[0].text)
	rest := toks[1:]
	if verb == "drop" && isWord(rest[0], "database", "schema") {
		db := skipWords(rest[1:], "if", "exists")
		return len(db) > 0 && strings.EqualFold(db[0].text, schema)
	}
	switch verb {
	case "alter", "drop", "truncate", "rename":
	default:
		return false
	}
	// ALTER [ONLINE] [IGNORE] TABLE, DROP [TEMPORARY] TABLE [IF EXISTS],
	// TRUNCATE [TABLE], RENAME TABLE: the table names follow.
	rest = skipWords(rest, "online", "ignore", "temporary")
	if !isWord(rest[0], "table", "tables") {
		if verb != "truncate" {
			return false // ALTER VIEW, DROP INDEX, DROP USER…
		}
	} else {
		rest = rest[1:]
	}
	rest = skipWords(rest, "if", "exists")
	for _, n := range tableNames(rest, verb == "alter" || verb == "truncate") {
		db := n[0]
		if db == "" {
			db = defaultSchema
		}
		if strings.EqualFold(db, schema) && strings.EqualFold(n[1], name) {
			return true
		}
	}
	return false
}

// tableNames reads "[db.]t [, [db.]t …]" (RENAME's "a TO b, c TO d"
// included), only the first when one is true.
func tableNames(toks []ddlToken, one bool) [][2]string {
	var out [][2]string
	for i := 0; i < len(toks); {
		if toks[i].punct {
			break
		}
		n := [2]string{"", toks[i].text}
		i++
		if i+1 < len(toks) && toks[i].text == "." && toks[i].punct && !toks[i+1].punct {
			n = [2]string{n[1], toks[i+1].text}
			i += 2
		}
		out = append(out, n)
		if one || i >= len(toks) {
			break
		}
		switch {
		case toks[i].punct && toks[i].text == ",":
			i++
		case isWord(toks[i], "to"):
			i++
		default:
			return out // WAIT n, CASCADE, ADD COLUMN…
		}
	}
	return out
}

type ddlToken struct {
	text  string
	punct bool // "." or "," or another symbol; never a quoted name
}

// ddlTokens splits q into words, `quoted` or "quoted" names and single
// symbols, dropping comments.
func ddlTokens(q string) []ddlToken {
	var out []ddlToken
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case unicode.IsSpace(rune(c)):
			i++
		case strings.HasPrefix(q[i:], "/*"):
			i = skipTo(q, i+2, "*/")
		case strings.HasPrefix(q[i:], "-- "), c == '#':
			i = skipTo(q, i, "\n")
		case c == '`' || c == '"':
			text, next := quoted(q, i)
			out, i = append(out, ddlToken{text: text}), next
		case isIdentByte(c):
			j := i
			for j < len(q) && isIdentByte(q[j]) {
				j++
			}
			out, i = append(out, ddlToken{text: q[i:j]}), j
		default:
			out, i = append(out, ddlToken{text: string(c), punct: true}), i+1
		}
	}
	return out
}

// quoted reads the name quoted at q[i] (a doubled quote is one quote).
func quoted(q string, i int) (string, int) {
	mark := q[i]
	var b strings.Builder
	for j := i + 1; j < len(q); j++ {
		if q[j] != mark {
			b.WriteByte(q[j])
			continue
		}
		if j+1 < len(q) && q[j+1] == mark {
			b.WriteByte(mark)
			j++
			continue
		}
		return b.String(), j + 1
	}
	return b.String(), len(q)
}

func skipTo(q string, i int, end string) int {
	if k := strings.Index(q[i:], end); k >= 0 {
		return i + k + len(end)
	}
	return len(q)
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || ('0' <= c && c <= '9') || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z')
}

func isWord(t ddlToken, words ...string) bool {
	if t.punct {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(t.text, w) {
			return true
		}
	}
	return false
}

// skipWords drops leading tokens that are any of words.
func skipWords(toks []ddlToken, words ...string) []ddlToken {
	for len(toks) > 1 && isWord(toks[0], words...) {
		toks = toks[1:]
	}
	return toks
}
