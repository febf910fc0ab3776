package graph

import (
	"strings"
	"testing"

	"github.com/weirstream/weir/operator"
)

func node(g *StreamGraph, name string, p int) *Node {
	return g.AddNode(&Node{Name: name, Parallelism: p, NewOperator: func() operator.Operator { return &operator.Base{} }})
}

func TestChainingRules(t *testing.T) {
	g := &StreamGraph{JobName: "j"}
	src := node(g, "src", 2)
	a := node(g, "a", 2) // forward, same parallelism: chained to src
	b := node(g, "b", 2) // hash: new chain
	c := node(g, "c", 2) // forward from b: chained
	d := node(g, "d", 3) // different parallelism: forward becomes rebalance, new chain
	e := node(g, "e", 3) // side output edge from d: new chain
	f := node(g, "f", 3) // two inputs (d and e): new chain
	x := node(g, "x", 2) // second consumer of a → a has two outputs: b not chained either way
	g.Connect(&Edge{From: src.ID, To: a.ID})
	g.Connect(&Edge{From: a.ID, To: b.ID, Partitioning: Hash, Key: func(v any) any { return v }})
	g.Connect(&Edge{From: a.ID, To: x.ID})
	g.Connect(&Edge{From: b.ID, To: c.ID})
	g.Connect(&Edge{From: c.ID, To: d.ID})
	g.Connect(&Edge{From: d.ID, To: e.ID, SideTag: "late"})
	g.Connect(&Edge{From: d.ID, To: f.ID})
	g.Connect(&Edge{From: e.ID, To: f.ID, Input: 1})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range jg.Vertices {
		names = append(names, v.Name)
	}
	want := "src -> a | b -> c | d | e | f | x"
	if got := strings.Join(names, " | "); got != want {
		t.Fatalf("chains %q, want %q", got, want)
	}
	if p := g.Edges[4].Partitioning; p != Rebalance {
		t.Fatalf("forward edge between parallelism 2 and 3 is %v, want REBALANCE", p)
	}
}

func TestValidateRejectsDuplicateUIDAndBadParallelism(t *testing.T) {
	g := &StreamGraph{}
	g.AddNode(&Node{Name: "a", UID: "same", Parallelism: 1})
	g.AddNode(&Node{Name: "b", UID: "same", Parallelism: 1})
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), `uid "same"`) {
		t.Fatalf("duplicate uid: %v", err)
	}
	g = &StreamGraph{MaxParallelism: 4}
	g.AddNode(&Node{Name: "a", Parallelism: 5})
	if err := g.Validate(); err == nil || !strings.Contains(err.Error(), "parallelism 5, want 1..4") {
		t.Fatalf("parallelism above max: %v", err)
	}
}

func TestChainNamesAreUnique(t *testing.T) {
	g := &StreamGraph{JobName: "j"}
	a, b := node(g, "Source: bills", 1), node(g, "Source: bills", 1)
	ka, kb := node(g, "Sink", 1), node(g, "Sink", 1)
	g.Connect(&Edge{From: a.ID, To: ka.ID})
	g.Connect(&Edge{From: b.ID, To: kb.ID})
	jg, err := g.JobGraph()
	if err != nil {
		t.Fatal(err)
	}
	if jg.Vertices[0].Name == jg.Vertices[1].Name {
		t.Fatalf("two chains named %q", jg.Vertices[0].Name)
	}
}
