package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weirstream/weir/graph"
)

var updateUIDs = flag.Bool("update-uids", false, "rewrite testdata/uids with the operator uids and state schemas the planner gives now")

// TestOperatorUIDs: the operator uids of every supported query's job are
// those in testdata/uids, and each keyed operator's state schema there is
// the one it declares now or one it accepts as older (Legacy).
// Checkpoints and savepoints restore by uid (the SQL planner numbers
// operators in the order it adds them) and refuse state whose schema
// changed, so a planner change that adds or drops an operator node before
// others, or changes what a keyed operator says it keeps, makes a
// savepoint of the same query, taken before, fail to restore. A change
// here must be deliberate: run with -update-uids and say why in the
// commit.
func TestOperatorUIDs(t *testing.T) {
	s := testSuite(t)
	var b strings.Builder
	nodes := map[string]*graph.Node{} // "q uid" → node
	for _, q := range supported() {
		sc, err := s.Script(q, Params{Events: 1000, Dir: t.TempDir(), Engine: "weir"})
		if err != nil {
			t.Fatal(err)
		}
		jg, _, err := planWeir(sc, RunConfig{Parallelism: 2, StateBackend: "hashmap"}, &rowCounter{})
		if err != nil {
			t.Fatal(err)
		}
		var schemas []string
		fmt.Fprintf(&b, "%s:", q)
		for _, v := range jg.Vertices {
			for _, n := range v.Nodes {
				fmt.Fprintf(&b, " %s", n.UID)
				nodes[q+" "+n.UID] = n
				if n.StateSchema != nil {
					schemas = append(schemas, fmt.Sprintf("  %s %s\n", n.UID, n.StateSchema.Types))
				}
			}
		}
		b.WriteString("\n" + strings.Join(schemas, ""))
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
	uidLines := func(s string) []string {
		var out []string
		for _, l := range strings.Split(s, "\n") {
			if l != "" && !strings.HasPrefix(l, "  ") {
				out = append(out, l)
			}
		}
		return out
	}
	if got, w := uidLines(b.String()), uidLines(string(want)); !slices.Equal(got, w) {
		t.Errorf("operator uids changed (a savepoint taken before would not restore):\n got: %s\nwant: %s",
			strings.Join(got, "\n"), strings.Join(w, "\n"))
	}
	q := ""
	for _, l := range strings.Split(string(want), "\n") {
		if !strings.HasPrefix(l, "  ") {
			q, _, _ = strings.Cut(l, ":")
			continue
		}
		uid, types, _ := strings.Cut(strings.TrimPrefix(l, "  "), " ")
		n := nodes[q+" "+uid]
		switch {
		case n == nil || n.StateSchema == nil:
			t.Errorf("%s %s: no state schema now, was %s", q, uid, types)
		case n.StateSchema.Types != types && !slices.Contains(n.StateSchema.Legacy, types):
			t.Errorf("%s %s: state schema %s, which does not accept the one before, %s", q, uid, n.StateSchema.Types, types)
		}
	}
}
