package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Params are the values of the placeholders of queries.sql and the
// rewrites a run needs.
type Params struct {
	// Events is ${EVENTS_NUM}. Required.
	Events int64
	// TPS is ${TPS}: the generator's event rate, which sets the event
	// timestamps (both engines emit as fast as they can). Default
	// 10,000,000, Nexmark V1's setting.
	TPS int64
	// Dir is ${NEXMARK_DIR} and ${FLINK_HOME}: q10 writes under it, q13's
	// side input file is written to Dir/data/side_input.txt. Required.
	Dir string
	// SubmitTime is ${SUBMIT_TIME}. Default 0.
	SubmitTime int64
	// Engine is "weir" or "flink": the side-input table of q13 uses each
	// engine's lookup connector. Default "weir".
	Engine string
	// Changelog, when set, is a directory: every sink table of the query
	// writes its changelog there in canonical text ('connector' =
	// 'changelog-file', file <table>.txt) instead of its own connector.
	Changelog string
}

// DefaultTPS is Nexmark V1's event rate (bench/flink's default too).
const DefaultTPS = 10_000_000

// Script is one query ready to run: every statement, placeholders
// substituted, in order: the source table, the views, then the query's
// statements with the INSERT last.
type Script struct {
	Query      string
	Statements []string
	// Functions are the query's CREATE FUNCTION statements, name → class.
	// They are kept out of Statements: Weir registers the Go version of
	// each class (see udf.go), Flink the Java one.
	Functions map[string]string
	// Sinks are the tables the INSERTs write.
	Sinks []string
}

// Text is the script as one SQL text.
func (s *Script) Text() string {
	var b strings.Builder
	for _, st := range s.Statements {
		b.WriteString(st)
		b.WriteString(";\n\n")
	}
	return b.String()
}

var (
	createFunction = regexp.MustCompile(`(?is)^CREATE\s+(?:TEMPORARY\s+)?(?:SYSTEM\s+)?FUNCTION\s+(\w+)\s+AS\s+'([^']+)'`)
	insertInto     = regexp.MustCompile(`(?is)^INSERT\s+INTO\s+` + "`?" + `(\w+)`)
	createTable    = regexp.MustCompile(`(?is)^CREATE\s+TABLE\s+` + "`?" + `(\w+)`)
	withClause     = regexp.MustCompile(`(?is)\)\s*(?:PARTITIONED\s+BY\s*\([^)]*\)\s*)?WITH\s*\(.*$`)
	legacyPath     = regexp.MustCompile(`'connector\.path'\s*=\s*'(?:file://)?([^']*)'`)
)

// Script returns query q with p's values.
func (s *Suite) Script(q string, p Params) (*Script, error) {
	query, ok := s.Queries[q]
	if !ok {
		return nil, fmt.Errorf("nexmark: no query %q in queries.sql (have %s)", q, strings.Join(s.Names(), ", "))
	}
	if p.Events <= 0 || p.Dir == "" {
		return nil, fmt.Errorf("nexmark: Params need Events > 0 and a Dir")
	}
	if p.TPS == 0 {
		p.TPS = DefaultTPS
	}
	vars := map[string]string{
		"TPS": strconv.FormatInt(p.TPS, 10), "EVENTS_NUM": strconv.FormatInt(p.Events, 10),
		"PERSON_PROPORTION": "1", "AUCTION_PROPORTION": "3", "BID_PROPORTION": "46",
		"NEXMARK_TABLE": "datagen", "NEXMARK_DIR": p.Dir, "FLINK_HOME": p.Dir,
		"SUBMIT_TIME": strconv.FormatInt(p.SubmitTime, 10),
	}
	sc := &Script{Query: q, Functions: map[string]string{}}
	sc.Statements = append(sc.Statements, substitute(s.DDL, vars))
	for _, v := range s.Views {
		sc.Statements = append(sc.Statements, substitute(v, vars))
	}
	for _, st := range query.Statements {
		st = substitute(st, vars)
		if m := createFunction.FindStringSubmatch(st); m != nil {
			sc.Functions[m[1]] = m[2]
			continue
		}
		if m := insertInto.FindStringSubmatch(st); m != nil {
			sc.Sinks = append(sc.Sinks, m[1])
		}
		sc.Statements = append(sc.Statements, st)
	}
	for i, st := range sc.Statements {
		var err error
		if sc.Statements[i], err = rewriteTable(st, sc.Sinks, p); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

func substitute(st string, vars map[string]string) string {
	for k, v := range vars {
		st = strings.ReplaceAll(st, "${"+k+"}", v)
	}
	return st
}

// rewriteTable applies the two table rewrites: q13's side input table
// (legacy 'connector.type' options, which neither Flink 2 nor Weir reads)
// becomes a lookup-able table of the engine, and with p.Changelog every
// sink table writes its changelog to a file.
func rewriteTable(st string, sinks []string, p Params) (string, error) {
	m := createTable.FindStringSubmatch(st)
	if m == nil {
		return st, nil
	}
	name := m[1]
	switch {
	case strings.Contains(st, "'connector.type'"):
		return sideInputTable(st, p)
	case p.Changelog != "" && contains(sinks, name):
		path := filepath.Join(p.Changelog, name+".txt")
		return withClause.ReplaceAllLiteralString(st, fmt.Sprintf(") WITH ('connector' = 'changelog-file', 'path' = '%s')", path)), nil
	}
	return st, nil
}

// sideInputTable writes the side input file Nexmark's SideInputGenerator
// writes (10,000 lines "i,i") and points the table at it.
func sideInputTable(st string, p Params) (string, error) {
	m := legacyPath.FindStringSubmatch(st)
	if m == nil {
		return "", fmt.Errorf("nexmark: the side input table has no 'connector.path'")
	}
	path := m[1]
	if err := writeSideInput(path, 10000); err != nil {
		return "", err
	}
	connector := "filesystem"
	if p.Engine == "flink" {
		connector = "side-input" // bench/flink's lookup source: Flink 2's filesystem source cannot be looked up
	}
	return withClause.ReplaceAllLiteralString(st, fmt.Sprintf(") WITH ('connector' = '%s', 'path' = '%s', 'format' = 'csv')", connector, path)), nil
}

func writeSideInput(path string, n int) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("nexmark: side input: %w", err)
	}
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "%d,%d\n", i, i)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
