package metrics

// VertexStats is one job vertex's activity summed (counts) or averaged
// (time ratios) over its subtasks of the current attempt: what a
// dashboard colours a job graph by and the REST API serves.
type VertexStats struct {
	// Task is the vertex's name (Flink's task_name); Parallelism the
	// number of its subtasks.
	Task        string
	Parallelism int
	// Records and bytes in and out, and their rates per second (see
	// Subtask).
	RecordsIn, RecordsOut, BytesIn, BytesOut                                     int64
	RecordsInPerSecond, RecordsOutPerSecond, BytesInPerSecond, BytesOutPerSecond float64
	// BusyMsPerSecond, BackPressuredMsPerSecond, IdleMsPerSecond are the
	// subtasks' ratios averaged (0 to 1000); MaxBusyMsPerSecond and
	// MaxBackPressuredMsPerSecond the highest of one subtask (Flink's
	// dashboard colours a vertex by its busiest subtask).
	BusyMsPerSecond, BackPressuredMsPerSecond, IdleMsPerSecond float64
	MaxBusyMsPerSecond, MaxBackPressuredMsPerSecond            float64
	// BackPressuredSubtasks counts the subtasks waiting for an output
	// credit right now.
	BackPressuredSubtasks int
}

// Vertices returns the job's vertices, in the order of Subtasks (by task
// name), with their subtasks' values.
func (j *Job) Vertices() []VertexStats {
	var out []VertexStats
	for _, s := range j.Subtasks() {
		if len(out) == 0 || out[len(out)-1].Task != s.Task {
			out = append(out, VertexStats{Task: s.Task})
		}
		out[len(out)-1].add(s)
	}
	for i := range out {
		v := &out[i]
		n := float64(v.Parallelism)
		v.BusyMsPerSecond, v.BackPressuredMsPerSecond, v.IdleMsPerSecond = v.BusyMsPerSecond/n, v.BackPressuredMsPerSecond/n, v.IdleMsPerSecond/n
	}
	return out
}

// add adds subtask s's values (ratios are summed here, averaged by
// Vertices).
func (v *VertexStats) add(s *Subtask) {
	v.Parallelism++
	v.RecordsIn += s.RecordsIn.Load()
	v.RecordsOut += s.RecordsOut.Load()
	v.BytesIn += s.BytesIn.Load()
	v.BytesOut += s.BytesOut.Load()
	v.RecordsInPerSecond += s.RecordsInPerSecond.Load()
	v.RecordsOutPerSecond += s.RecordsOutPerSecond.Load()
	v.BytesInPerSecond += s.BytesInPerSecond.Load()
	v.BytesOutPerSecond += s.BytesOutPerSecond.Load()
	busy, bp := s.BusyMsPerSecond.Load(), s.BackPressuredMsPerSecond.Load()
	v.BusyMsPerSecond += busy
	v.BackPressuredMsPerSecond += bp
	v.IdleMsPerSecond += s.IdleMsPerSecond.Load()
	v.MaxBusyMsPerSecond = max(v.MaxBusyMsPerSecond, busy)
	v.MaxBackPressuredMsPerSecond = max(v.MaxBackPressuredMsPerSecond, bp)
	if s.BackPressured.Load() {
		v.BackPressuredSubtasks++
	}
}
