package runtime

import (
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
	"github.com/weirstream/weir/state/pebble"
	"github.com/weirstream/weir/task"
)

// A restore compares each operator's state schema with the checkpoint's:
// a checkpoint without schemas (older), or without one for the operator,
// restores unchecked; a changed one fails with IncompatibleStateError, or,
// told to ignore unclaimed state, loses that operator's state but not
// its channel state.
func TestCheckSchemas(t *testing.T) {
	schema := &graph.StateSchema{Operator: "Agg(k)", Types: "Agg: key (DOUBLE)", Text: "key (k DOUBLE)"}
	j := &job{jg: &graph.JobGraph{Vertices: []*graph.Vertex{{Nodes: []*graph.Node{
		{UID: "plain"}, {UID: "agg", StateSchema: schema}}}}}, opts: &Options{Logger: slog.New(slog.DiscardHandler)}}
	restored := func(old map[string]checkpointstorage.StateSchema) *restoredState {
		return &restoredState{id: 7, complete: true, schemas: old, parts: map[string]map[string][][]byte{
			"agg": {"keyed": {[]byte("x")}, task.PartChannelState: {[]byte("c")}}}}
	}
	if got := j.stateSchemas(); !reflect.DeepEqual(got, map[string]checkpointstorage.StateSchema{"agg": {Types: schema.Types, Text: schema.Text}}) {
		t.Fatalf("stateSchemas: %v", got)
	}
	for _, old := range []map[string]checkpointstorage.StateSchema{nil, {"other": {Types: "x"}},
		{"agg": {Types: schema.Types, Text: "key (renamed DOUBLE)"}}} {
		if err := j.checkSchemas(restored(old)); err != nil {
			t.Errorf("schemas %v: %v", old, err)
		}
	}
	// A checkpoint of an older Weir recorded one of the legacy fingerprints.
	schema.Legacy = []string{"Agg: key (old DOUBLE), format (old)", "Agg: key (old DOUBLE)"}
	for _, l := range schema.Legacy {
		if err := j.checkSchemas(restored(map[string]checkpointstorage.StateSchema{"agg": {Types: l}})); err != nil {
			t.Errorf("legacy schema %q: %v", l, err)
		}
	}
	changed := map[string]checkpointstorage.StateSchema{"agg": {Types: "Agg: key (INT)", Text: "key (k INT)"}}
	err := j.checkSchemas(restored(changed))
	var ie *IncompatibleStateError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(),
		`state of operator "Agg(k)" (uid agg) in checkpoint 7 was written for key (k INT); this job has key (k DOUBLE): the state is not compatible`) {
		t.Fatalf("changed schema: %v", err)
	}
	j.opts.IgnoreUnclaimedState = true
	r := restored(changed)
	if err := j.checkSchemas(r); err != nil {
		t.Fatal(err)
	}
	if want := map[string][][]byte{task.PartChannelState: {[]byte("c")}}; !reflect.DeepEqual(r.parts["agg"], want) {
		t.Fatalf("after dropping: %v, want %v", r.parts["agg"], want)
	}
}

// A restore of an incremental checkpoint into another state backend than
// the one that wrote it fails before any task runs, naming both and the
// way out; canonical blobs and the same backend restore.
func TestCheckBackend(t *testing.T) {
	restored := func(blob string) *restoredState {
		return &restoredState{id: 9, complete: true, parts: map[string]map[string][][]byte{
			"plain": {task.PartChannelState: {[]byte("c")}}, "agg": {"keyed": {[]byte("WHK1..."), []byte(blob)}}}}
	}
	for _, c := range []struct {
		backend state.BackendFactory
		blob    string
		want    string // "" when it restores
	}{
		{heap.Factory{Incremental: true}, "WHI1{}", ""},
		{heap.Factory{}, "WHK1...", ""},
		{pebble.Factory{}, "WPI1{}", ""},
		{pebble.Factory{}, "WHK1...", ""},
		{pebble.Factory{}, "WHI1{}", "checkpoint 9 is an incremental checkpoint of state.backend.type 'hashmap' (state of operator uid agg); this job runs 'pebble'"},
		{heap.Factory{Incremental: true}, "WPI1{}", "checkpoint 9 is an incremental checkpoint of state.backend.type 'pebble' (state of operator uid agg); this job runs 'hashmap'"},
	} {
		j := &job{jg: &graph.JobGraph{}, opts: &Options{StateBackend: c.backend}}
		err := j.checkBackend(restored(c.blob))
		var me *BackendMismatchError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s restoring %q: %v", c.backend.Type(), c.blob, err)
		case c.want != "" && (!errors.As(err, &me) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s restoring %q: got %v, want %q", c.backend.Type(), c.blob, err, c.want)
		}
	}
}
