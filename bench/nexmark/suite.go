package main

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Suite is queries.sql split into its sections: the generator table's DDL
// (ddl_gen.sql), the person/auction/bid views (ddl_views.sql) and one
// section per query. The Kafka DDL and the Kafka loader are not used.
type Suite struct {
	// DDL is the CREATE TABLE of the generated stream, named datagen.
	DDL string
	// Views are the three CREATE VIEW statements.
	Views []string
	// Queries by name ("q0" … "q23").
	Queries map[string]*Query
}

// Unsupported are the queries of q0–q22 that Weir does not run, and why
// (README.md says more). The runner still tries them, so that the table
// shows the planner's error.
var Unsupported = map[string]string{
	"q6": "OVER window (AVG … ROWS BETWEEN 10 PRECEDING) on an updating input; Flink rejects it too (FLINK-19059)",
}

// Query is one query section: its title line and its statements (sink
// table DDL, helper views and functions, and the INSERT, last).
type Query struct {
	Name       string
	Title      string
	Statements []string
}

var sectionHead = regexp.MustCompile(`^-- ===== (?:(q\d+):\s*)?(.*)$`)

// LoadSuite reads and splits a queries.sql file.
func LoadSuite(path string) (*Suite, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("nexmark: reading the query definitions: %w (set -queries-file, or put shared/ beside the repository)", err)
	}
	return ParseSuite(string(b))
}

// ParseSuite splits the text of queries.sql. Sections start at lines
// "-- ===== "; the DDL and views sections are recognised by the file names
// their titles cite.
func ParseSuite(text string) (*Suite, error) {
	s := &Suite{Queries: map[string]*Query{}}
	var name, title string
	var body strings.Builder
	flush := func() {
		stmts := SplitStatements(body.String())
		switch {
		case name != "":
			s.Queries[name] = &Query{Name: name, Title: title, Statements: stmts}
		case strings.Contains(title, "(ddl_gen.sql)") && len(stmts) == 1:
			s.DDL = stmts[0]
		case strings.Contains(title, "(ddl_views.sql)"):
			s.Views = stmts
		}
		body.Reset()
	}
	for _, line := range strings.Split(text, "\n") {
		if m := sectionHead.FindStringSubmatch(line); m != nil {
			flush()
			name, title = m[1], strings.TrimSpace(m[2])
			continue
		}
		body.WriteString(line)
		body.WriteByte('\n')
	}
	flush()
	if s.DDL == "" || len(s.Views) != 3 || len(s.Queries) == 0 {
		return nil, fmt.Errorf("nexmark: queries.sql lacks the ddl_gen.sql table, the three ddl_views.sql views or the query sections (found ddl=%t, %d views, %d queries)",
			s.DDL != "", len(s.Views), len(s.Queries))
	}
	return s, nil
}

// Names returns the query names in numeric order.
func (s *Suite) Names() []string {
	var out []string
	for n := range s.Queries {
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return queryNumber(out[i]) < queryNumber(out[j]) })
	return out
}

func queryNumber(name string) int {
	n, _ := strconv.Atoi(strings.TrimPrefix(name, "q"))
	return n
}

// SplitStatements splits SQL text at semicolons outside quotes and
// comments, dropping comments and empty statements.
func SplitStatements(text string) []string {
	var out []string
	var cur strings.Builder
	var quote byte
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '`' || c == '"':
			quote = c
		case c == '-' && i+1 < len(text) && text[i+1] == '-':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			cur.WriteByte('\n')
			continue
		case c == ';':
			if st := strings.TrimSpace(cur.String()); st != "" {
				out = append(out, st)
			}
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	if st := strings.TrimSpace(cur.String()); st != "" {
		out = append(out, st)
	}
	return out
}
