package runtime

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/task"
)

// IncompatibleStateError is a restore into an operator whose state schema
// (graph.Node.StateSchema) differs from the one the checkpoint's state was
// written for: a column changed type, say. As Flink does when a state
// serializer is incompatible, the job fails to start rather than read
// the old state as if it were of the new types.
type IncompatibleStateError struct {
	Checkpoint string // the checkpoint or savepoint restored
	UID        string
	Operator   string // the operator, as the job's language names it
	Old, New   string // the schema in the checkpoint, and the job's (StateSchema.Text)
}

// Error implements error.
func (e *IncompatibleStateError) Error() string {
	return fmt.Sprintf("runtime: state of operator %q (uid %s) in %s was written for %s; this job has %s: "+
		"the state is not compatible; start without --restore, or restore with --allow-non-restored-state "+
		"(as 'execution.savepoint.ignore-unclaimed-state' = 'true') to drop this operator's state and start it empty",
		e.Operator, e.UID, e.Checkpoint, e.Old, e.New)
}

// stateSchemas lists the StateSchema of each node that declares one, for
// the checkpoint metadata.
func (j *job) stateSchemas() map[string]checkpointstorage.StateSchema {
	var m map[string]checkpointstorage.StateSchema
	for _, n := range j.schemaNodes() {
		if m == nil {
			m = map[string]checkpointstorage.StateSchema{}
		}
		m[n.UID] = checkpointstorage.StateSchema{Types: n.StateSchema.Types, Text: n.StateSchema.Text}
	}
	return m
}

// schemaNodes are the job's nodes that declare a StateSchema, by uid.
func (j *job) schemaNodes() []*graph.Node {
	var ns []*graph.Node
	for _, v := range j.jg.Vertices {
		for _, n := range v.Nodes {
			if n.StateSchema != nil {
				ns = append(ns, n)
			}
		}
	}
	slices.SortFunc(ns, func(a, b *graph.Node) int { return strings.Compare(a.UID, b.UID) })
	return ns
}

// checkSchemas fails a restore into an operator whose state schema
// changed since the checkpoint; told to ignore unclaimed state, it drops
// that operator's state instead (its channel state stays), so the
// operator starts empty. Checkpoints that record no schemas, and
// operators without one on either side, are not checked.
func (j *job) checkSchemas(r *restoredState) error {
	if r == nil || r.schemas == nil {
		return nil
	}
	for _, n := range j.schemaNodes() {
		old, ok := r.schemas[n.UID]
		if !ok || old.Types == n.StateSchema.Types || slices.Contains(n.StateSchema.Legacy, old.Types) && old.Types != "" || r.parts[n.UID] == nil {
			continue
		}
		e := &IncompatibleStateError{Checkpoint: j.startedFrom, UID: n.UID, Operator: n.StateSchema.Operator,
			Old: old.Text, New: n.StateSchema.Text}
		if e.Checkpoint == "" {
			e.Checkpoint = fmt.Sprintf("checkpoint %d", r.id)
		}
		if !j.opts.IgnoreUnclaimedState {
			return e
		}
		j.opts.Logger.Warn("restore drops the state of an operator whose state schema changed, as told",
			"checkpoint", e.Checkpoint, "uid", n.UID, "operator", e.Operator, "was", old.Text, "now", e.New)
		r.dropOperatorState(n.UID)
	}
	return nil
}

// dropOperatorState forgets the state of the operator with uid, keeping
// the in-flight channel state its subtasks' chains hold under its uid.
func (r *restoredState) dropOperatorState(uid string) {
	kept := map[string][][]byte{}
	for name, v := range r.parts[uid] {
		if name == task.PartChannelState || name == task.PartOutputState {
			kept[name] = v
		}
	}
	r.parts[uid] = kept
}
