package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateUIDs = flag.Bool("update-uids", false, "rewrite testdata/uids with the operator uids the planner gives now")

// TestOperatorUIDs: the operator uids of every supported query's job are
// those in testdata/uids. Checkpoints and savepoints restore by uid (the
// SQL planner numbers operators in the order it adds them), so a planner
// change that adds or drops an operator node before others makes a
// savepoint of the same query, taken before, fail to restore. A change
// here must be deliberate: run with -update-uids and say why in the
// commit.
func TestOperatorUIDs(t *testing.T) {
	s := testSuite(t)
	var b strings.Builder
	for _, q := range supported() {
		sc, err := s.Script(q, Params{Events: 1000, Dir: t.TempDir(), Engine: "weir"})
		if err != nil {
			t.Fatal(err)
		}
		jg, _, err := planWeir(sc, RunConfig{Parallelism: 2, StateBackend: "hashmap"}, &rowCounter{})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s:", q)
		for _, v := range jg.Vertices {
			for _, n := range v.Nodes {
				fmt.Fprintf(&b, " %s", n.UID)
			}
		}
		b.WriteString("\n")
	}
	path := filepath.Join("testdata", "uids")
	if *updateUIDs {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != string(want) {
		t.Errorf("operator uids changed (a savepoint taken before would not restore):\n got: %s\nwant: %s", got, want)
	}
}
