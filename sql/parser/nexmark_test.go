package parser

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// nexmarkSections splits testdata/nexmark.sql (a copy of the benchmark's
// query definitions) at its "-- ===== name:" markers, with ${NEXMARK_TABLE}
// substituted as the benchmark's runner does. Placeholders inside string
// literals stay as they are.
func nexmarkSections(t testing.TB) (names, sqls []string) {
	data, err := os.ReadFile("testdata/nexmark.sql")
	if err != nil {
		t.Fatal(err)
	}
	src := strings.ReplaceAll(string(data), "${NEXMARK_TABLE}", "datagen")
	marker := regexp.MustCompile(`(?m)^-- ===== (\S+?):?\s.*$`)
	locs := marker.FindAllStringSubmatchIndex(src, -1)
	for i, loc := range locs {
		end := len(src)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		names = append(names, src[loc[2]:loc[3]])
		sqls = append(sqls, src[loc[1]:end])
	}
	return names, sqls
}

// TestNexmark parses every Nexmark query (q0–q23, with the source table,
// views and Kafka loader) and checks its round trip through Format.
func TestNexmark(t *testing.T) {
	names, sqls := nexmarkSections(t)
	if len(names) < 25 {
		t.Fatalf("found %d sections, want the source DDL, views and q0–q23", len(names))
	}
	for i := range names {
		t.Run(names[i], func(t *testing.T) {
			stmts, err := ParseScript(sqls[i])
			if err != nil {
				t.Fatalf("%v\n%s", err, err.(*Error).Annotate(sqls[i]))
			}
			if len(stmts) == 0 {
				t.Fatal("no statements")
			}
			checkRoundTrip(t, names[i], stmts)
		})
	}
}
