package rest

import (
	"encoding/json"
	"testing"

	"github.com/weirstream/weir/rest/api"
)

// TestManySubtasksStaySmall: at 2,000 subtasks (a synthetic job: one
// vertex's details as the JobManager builds them) /jobs/:jobid without
// ?subtasks=all stays under 4 KB, whatever the parallelism, and a page of
// the vertex's subtasks holds the page's subtasks with the total
// (FLINK-35902: 1.75 MB at 5,000 subtasks before).
func TestManySubtasksStaySmall(t *testing.T) {
	const n = 2000
	subs := make([]api.Subtask, n)
	for i := range subs {
		subs[i] = api.Subtask{Subtask: i, Status: api.StateRunning, Endpoint: "127.0.0.1:6121", TaskManagerID: "tm-1"}
	}
	d := api.JobDetails{JID: "ab", Name: "wide", State: api.StateRunning, Vertices: []api.JobVertex{
		{ID: "cd", Name: "Source: wide", Parallelism: n, Status: api.StateRunning, Tasks: api.TaskCounts{Running: n}, Subtasks: subs},
	}}
	full, _ := json.Marshal(d)
	small, _ := json.Marshal(withoutSubtasks(d))
	if len(small) >= 4<<10 || len(full) < 100*n {
		t.Errorf("job details at %d subtasks: %d bytes without subtasks (want < 4 KB), %d with", n, len(small), len(full))
	}
	if len(d.Vertices[0].Subtasks) != n {
		t.Errorf("withoutSubtasks changed its argument")
	}
	for _, tc := range []struct {
		w          window
		first, len int
	}{
		{window{0, 100}, 0, 100},
		{window{1900, 100}, 1900, 100},
		{window{1950, 100}, 1950, 50},
		{window{2000, 100}, 0, 0},
		{window{5000, 100}, 0, 0},
		{window{10, -1}, 10, n - 10},
		{window{0, 0}, 0, 0},
	} {
		p := pageOf(subs, tc.w)
		if len(p) != tc.len || (tc.len > 0 && p[0].Subtask != tc.first) {
			t.Errorf("page %+v: %d subtasks from %v, want %d from %d", tc.w, len(p), p[:min(1, len(p))], tc.len, tc.first)
		}
	}
}
