package graph

import (
	"fmt"
	"strings"
)

// Vertex is an operator chain: the unit that runs as parallel subtasks.
type Vertex struct {
	ID          int
	Name        string
	Nodes       []*Node // head first
	Parallelism int
}

// Head is the first node of the chain.
func (v *Vertex) Head() *Node { return v.Nodes[0] }

// Tail is the last node of the chain.
func (v *Vertex) Tail() *Node { return v.Nodes[len(v.Nodes)-1] }

// IsSource reports whether the chain starts with a source.
func (v *Vertex) IsSource() bool { return v.Head().IsSource() }

// JobEdge is a StreamGraph edge that crosses vertices.
type JobEdge struct {
	From, To *Vertex
	Edge     *Edge
}

// JobGraph is the chained graph.
type JobGraph struct {
	JobName  string
	Vertices []*Vertex
	Edges    []*JobEdge
	vertexOf map[int]*Vertex
	stream   *StreamGraph
}

// MaxParallelism is the job's configured max parallelism — Flink's
// pipeline.max-parallelism, what its job details report — or -1 when the
// program left it unset (each operator then has the default, 128).
func (j *JobGraph) MaxParallelism() int {
	if j.stream == nil || j.stream.MaxParallelism <= 0 {
		return -1
	}
	return j.stream.MaxParallelism
}

// VertexOf returns the vertex holding node id.
func (j *JobGraph) VertexOf(node int) *Vertex { return j.vertexOf[node] }

// InEdges returns the job edges into v, first input first.
func (j *JobGraph) InEdges(v *Vertex) []*JobEdge {
	var in []*JobEdge
	for _, e := range j.Edges {
		if e.To == v {
			in = append(in, e)
		}
	}
	return in
}

// OutEdges returns the job edges leaving node n of its vertex.
func (j *JobGraph) OutEdges(n *Node) []*JobEdge {
	var out []*JobEdge
	for _, e := range j.Edges {
		if e.Edge.From == n.ID {
			out = append(out, e)
		}
	}
	return out
}

// JobGraph chains the StreamGraph's nodes into vertices.
func (g *StreamGraph) JobGraph() (*JobGraph, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	j := &JobGraph{JobName: g.JobName, vertexOf: map[int]*Vertex{}, stream: g}
	for _, n := range g.Nodes {
		if j.vertexOf[n.ID] != nil {
			continue
		}
		if in := g.inEdges(n.ID); len(in) == 1 && g.chainable(in[0]) {
			continue // reached from its chain's head below
		}
		j.addChain(n)
	}
	for _, e := range g.Edges {
		from, to := j.vertexOf[e.From], j.vertexOf[e.To]
		if from != to {
			j.Edges = append(j.Edges, &JobEdge{From: from, To: to, Edge: e})
		}
	}
	return j, nil
}

func (j *JobGraph) addChain(head *Node) {
	g := j.stream
	v := &Vertex{ID: len(j.Vertices), Parallelism: head.Parallelism}
	for n := head; n != nil; {
		v.Nodes = append(v.Nodes, n)
		j.vertexOf[n.ID] = v
		out := g.mainOut(n.ID)
		if len(out) == 1 && g.chainable(out[0]) {
			n = g.Nodes[out[0].To]
		} else {
			n = nil
		}
	}
	names := make([]string, len(v.Nodes))
	for i, n := range v.Nodes {
		names[i] = n.Name
	}
	v.Name = strings.Join(names, " -> ")
	// Subtasks are named by vertex (in checkpoints, messages): two chains
	// with the same operators (two scans of one table) must not collide.
	for _, other := range j.Vertices {
		if other.Name == v.Name {
			v.Name = fmt.Sprintf("%s [%d]", v.Name, v.ID)
			break
		}
	}
	j.Vertices = append(j.Vertices, v)
}

// Explain prints the plan: each vertex (operator chain) with its
// parallelism and its inputs.
func (j *JobGraph) Explain() string {
	var b strings.Builder
	fmt.Fprintf(&b, "== Job %q: %d operator chains ==\n", j.JobName, len(j.Vertices))
	for _, v := range j.Vertices {
		fmt.Fprintf(&b, "[%d] %s (parallelism %d)\n", v.ID, v.Name, v.Parallelism)
		for _, e := range j.InEdges(v) {
			tag := ""
			if e.Edge.SideTag != "" {
				tag = fmt.Sprintf(" side output %q", e.Edge.SideTag)
			}
			fmt.Fprintf(&b, "    <- [%d] %s%s, input %d\n", e.From.ID, e.Edge.Partitioning, tag, e.Edge.Input+1)
		}
	}
	return b.String()
}
