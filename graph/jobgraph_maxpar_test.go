package graph

import "testing"

// A JobGraph reports the configured max parallelism, -1 when unset.
func TestJobGraphMaxParallelism(t *testing.T) {
	for _, c := range []struct{ set, want int }{{0, -1}, {256, 256}} {
		jg := &JobGraph{stream: &StreamGraph{MaxParallelism: c.set}}
		if got := jg.MaxParallelism(); got != c.want {
			t.Errorf("StreamGraph.MaxParallelism %d: JobGraph.MaxParallelism() = %d, want %d", c.set, got, c.want)
		}
	}
}
