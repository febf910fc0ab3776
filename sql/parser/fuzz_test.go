package parser

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// FuzzParse checks that no input makes the parser panic, that every error
// is an *Error positioned inside the input, and that whatever parses
// survives the round trip through Format (same tree, stable text). The
// corpus starts from every input in testdata.
//
//	go test ./sql/parser -run '^$' -fuzz FuzzParse -fuzztime 10m
func FuzzParse(f *testing.F) {
	for _, s := range seedInputs(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		// A hang would stall the fuzzer without reporting the input; a
		// panic from the timer reports it. Parsing is polynomial (see
		// parser.memo), so any input here takes milliseconds.
		tm := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("slow input %q", src)) })
		defer tm.Stop()
		if stmts, err := ParseScript(src); err != nil {
			checkError(t, src, err)
		} else {
			checkRoundTrip(t, "script", stmts)
		}
		if e, err := ParseExpr(src); err != nil {
			checkError(t, src, err)
		} else {
			checkExprRoundTrip(t, "expr", e)
		}
		if typ, err := ParseType(src); err == nil {
			if again, err := ParseType(FormatType(typ)); err != nil || !sameTree(typ, again) {
				t.Fatalf("type round trip of %q: %v", FormatType(typ), err)
			}
		}
	})
}

func checkError(t *testing.T, src string, err error) {
	t.Helper()
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("error %v is a %T, not an *Error", err, err)
	}
	lines := strings.Count(src, "\n") + 1
	if perr.Pos.Line < 1 || perr.Pos.Line > lines || perr.Pos.Col < 1 {
		t.Fatalf("error %v lies outside the input (%d lines)", err, lines)
	}
}

var seedBlock = regexp.MustCompile(`(?ms)^(?:parse|error|expr|type|ast)\n(.*?)\n----`)

// seedInputs returns the inputs of the data-driven tests and the Nexmark
// sections.
func seedInputs(tb testing.TB) []string {
	_, out := nexmarkSections(tb)
	files, _ := filepath.Glob("testdata/*")
	for _, path := range files {
		if info, err := os.Stat(path); err != nil || info.IsDir() || strings.HasSuffix(path, ".sql") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range seedBlock.FindAllStringSubmatch(string(data), -1) {
			out = append(out, m[1])
		}
	}
	return out
}
