package jobmanager

import "github.com/weirstream/weir/metrics"

// TailGroups returns the metric groups of vertex id's subtasks in the
// current attempt, whose Tail a reader attaches to (GET …/tail); empty
// while the attempt is being deployed, and for a job from the store.
func (j *Job) TailGroups(id string) ([]*metrics.Subtask, error) {
	v, err := j.findVertex(id)
	if err != nil {
		return nil, err
	}
	var out []*metrics.Subtask
	for i := range v.Parallelism {
		if g := j.subtaskGroup(v, i); g != nil {
			out = append(out, g)
		}
	}
	return out, nil
}
