package runtime

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/metrics"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/heap"
	"github.com/weirstream/weir/task"
)

// restoredState is the state of a checkpoint regrouped by operator UID and
// part name, each list in old subtask order.
type restoredState struct {
	id event.CheckpointID
	// loc is the checkpoint's location (storage.Location(id)).
	loc   string
	parts map[string]map[string][][]byte
	// complete is true for a checkpoint or savepoint, which holds every
	// operator the job had: an operator missing from it is new. Source
	// positions kept across an at-most-once restart are not complete.
	complete bool
	// files is the checkpoint's storage, where keyed backends fetch the
	// files of incremental snapshots; closer closes it after the attempt
	// when it is not the job's own.
	files  state.RestoreFiles
	closer io.Closer
	// schemas is the checkpoint's Metadata.StateSchemas (nil in older
	// checkpoints, which restore unchecked).
	schemas map[string]checkpointstorage.StateSchema
}

func (r *restoredState) close() {
	if r != nil && r.closer != nil {
		_ = r.closer.Close()
	}
}

// isNew reports whether uid is an operator the restored checkpoint does not
// know: one added to the job since, or given another uid.
func (r *restoredState) isNew(uid string) bool {
	return r != nil && r.complete && r.parts[uid] == nil
}

func (r *restoredState) of(uid string) map[string][][]byte {
	if r == nil {
		return nil
	}
	if p := r.parts[uid]; p != nil {
		return p
	}
	return map[string][][]byte{}
}

// loadState reads every state file of checkpoint m, and verifies the
// files its subtasks' keyed backends will fetch (the SSTs and WAL chunks of
// incremental snapshots) that verified (nil: none) does not hold, adding
// them. A state file that is missing or corrupt is a
// *checkpointstorage.RestoreError around a *CorruptError.
//
// The files are verified here, before anything is deployed, because a
// restore has side effects: every sink commits the transactions the
// checkpoint recorded as it opens. Found only as a subtask fetched it, a
// corrupt file failed that subtask after the others had committed, and the
// older checkpoint restored then replayed their output (610 duplicates in
// internal/sim's TestChangedSharedFileFallsBack). The cost is one more
// read of each file, once per file and job: shared files never change, so
// a failover verifies only those uploaded since.
func loadState(fs *checkpointstorage.FS, m checkpointstorage.Metadata, verified map[string]bool) (*restoredState, error) {
	r := &restoredState{id: m.ID, loc: fs.Location(m.ID), parts: map[string]map[string][][]byte{}, complete: true,
		files: task.RestoreFiles{Storage: fs, ID: m.ID}, schemas: m.StateSchemas}
	for _, key := range sortedTaskKeys(m.Tasks) {
		ts, err := task.DecodeTaskState(m.Tasks[key])
		if err == nil {
			err = r.add(fs, ts)
		}
		if err != nil {
			return nil, &checkpointstorage.RestoreError{ID: m.ID, Err: fmt.Errorf("task %s: %w", key, err)}
		}
		if err := verifyFiles(fs, ts.Files, verified); err != nil {
			return nil, &checkpointstorage.RestoreError{ID: m.ID, Err: err} // shared by tasks: the file says it
		}
	}
	return r, nil
}

// verifyFiles checks the size and checksum of each file of hs that verified
// does not hold, in parallel (checkpointstorage.FS.VerifyFiles), and adds
// them.
func verifyFiles(fs *checkpointstorage.FS, hs []checkpointstorage.Handle, verified map[string]bool) error {
	var todo []checkpointstorage.Handle
	for _, h := range hs {
		if !verified[fs.Where(h.Path)] {
			todo = append(todo, h)
		}
	}
	if err := fs.VerifyFiles(todo); err != nil {
		return err
	}
	for _, h := range todo {
		if verified != nil {
			verified[fs.Where(h.Path)] = true
		}
	}
	return nil
}

func (r *restoredState) add(fs *checkpointstorage.FS, ts task.TaskState) error {
	for uid, parts := range ts.Operators {
		if r.parts[uid] == nil {
			r.parts[uid] = map[string][][]byte{}
		}
		for name, h := range parts {
			b, err := fs.ReadState(h)
			if err != nil {
				return err
			}
			r.parts[uid][name] = append(r.parts[uid][name], b)
		}
	}
	return nil
}

// taskKey is the key of a subtask in checkpoint metadata.
func taskKey(id event.SubtaskID) string { return id.Vertex + "/" + strconv.Itoa(id.Index) }

func sortedTaskKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		vi, ii := splitKey(keys[i])
		vj, ij := splitKey(keys[j])
		if vi != vj {
			return vi < vj
		}
		return ii < ij
	})
	return keys
}

func splitKey(k string) (string, int) {
	i := strings.LastIndex(k, "/")
	n, _ := strconv.Atoi(k[i+1:])
	return k[:i], n
}

// deployment is one attempt's set of subtasks.
type deployment struct {
	subtasks []*task.Subtask
	ids      []event.SubtaskID
	sources  []event.SubtaskID
	mail     map[event.SubtaskID]chan task.Mail
	metrics  map[string]*operator.Metrics // by operator UID, summed per subtask later
	opMetric []opMetric
	// groups are the subtasks' groups in Options.Metrics (nil without).
	groups []*metrics.Subtask
	// readers and writers are the live counters of source subtasks and of
	// subtasks whose chain ends in a sink.
	readers, writers []*task.Counters
	// counters are those of every subtask.
	counters []*task.Counters
	// stalls watch the sources whose subtasks may hold each other back.
	stalls []*sourceWatch
	// closers are the keyed backends to close when the attempt has ended.
	closers []io.Closer
	// err is the first error deploying: the attempt fails before it runs.
	err error
}

// fail records the first deployment error.
func (dp *deployer) fail(err error) {
	if dp.d.err == nil {
		dp.d.err = err
	}
}

// close releases the keyed backends (a disk backend removes its files); it
// runs once every subtask, and so every snapshot writer, has ended.
func (d *deployment) close() {
	for _, c := range d.closers {
		_ = c.Close()
	}
}

type opMetric struct {
	uid string
	m   *operator.Metrics
}

type deployer struct {
	ctx     context.Context
	jg      *graph.JobGraph
	opts    *Options
	fs      *checkpointstorage.FS
	restore *restoredState
	// positions collects source positions at exit (at-most-once mode).
	positions *positions
	reports   chan task.Report
	// savepoints are the directories of pending savepoints.
	savepoints *savepointDirs
	gates      map[int][]*task.InputGate // vertex id → gate per subtask
	chIndex    map[chanKey]int
	d          *deployment
	commit     operator.CommitTrigger
}

type chanKey struct {
	edge     *graph.Edge
	from, to int
}

// deploy builds every subtask of the job graph.
func (dp *deployer) deploy() *deployment {
	dp.d = &deployment{mail: map[event.SubtaskID]chan task.Mail{}}
	dp.gates = map[int][]*task.InputGate{}
	dp.chIndex = map[chanKey]int{}
	dp.commit = commitTrigger(dp.jg, dp.opts)
	for _, v := range dp.jg.Vertices {
		dp.makeGates(v)
	}
	for _, v := range dp.jg.Vertices {
		for i := 0; i < v.Parallelism; i++ {
			dp.makeSubtask(v, i)
		}
	}
	return dp.d
}

// makeGates numbers the input channels of each subtask of v: for each input
// edge in order, one channel per upstream subtask that sends to it.
func (dp *deployer) makeGates(v *graph.Vertex) {
	if v.IsSource() {
		return
	}
	gates := make([]*task.InputGate, v.Parallelism)
	for i := range gates {
		var inputOf []int
		for _, e := range dp.jg.InEdges(v) {
			for j := 0; j < e.From.Parallelism; j++ {
				if e.Edge.Partitioning == graph.Forward && j != i {
					continue
				}
				dp.chIndex[chanKey{e.Edge, j, i}] = len(inputOf)
				inputOf = append(inputOf, e.Edge.Input)
			}
		}
		gates[i] = task.NewInputGate(inputOf, dp.opts.ChannelCredits)
		gates[i].SetTarget(task.GateTarget{Vertex: v.Head().UID, Subtask: i, Parallelism: v.Parallelism,
			EdgeOf: dp.channelEdges(v, i)})
	}
	dp.gates[v.ID] = gates
}

// writers returns the record writers of node n in subtask i, by side tag
// ("" for the main output).
func (dp *deployer) writers(n *graph.Node, i int) map[string][]*task.RecordWriter {
	out := map[string][]*task.RecordWriter{}
	for _, e := range dp.jg.OutEdges(n) {
		var chans []*task.OutChannel
		for k := 0; k < e.To.Parallelism; k++ {
			if e.Edge.Partitioning == graph.Forward && k != i {
				continue
			}
			gate := dp.gates[e.To.ID][k]
			chans = append(chans, gate.Channel(dp.chIndex[chanKey{e.Edge, i, k}]))
		}
		w := task.NewRecordWriter(dp.ctx, chans, partitioner(e.Edge, n.MaxParallelism), dp.opts.BatchSize)
		out[e.Edge.SideTag] = append(out[e.Edge.SideTag], w)
	}
	return out
}

// commitTrigger says when the job's sinks can commit: on checkpoints when
// they are taken (periodically, or the final one of a bounded job); at the
// end of input in a bounded job without checkpoints; never in an unbounded
// job without periodic checkpoints.
func commitTrigger(jg *graph.JobGraph, o *Options) operator.CommitTrigger {
	bounded := true
	for _, v := range jg.Vertices {
		if v.IsSource() && !v.Head().Source.Bounded() {
			bounded = false
		}
	}
	switch {
	case o.Mode != task.AtMostOnce && (bounded || o.Checkpoint.Interval > 0):
		return operator.CommitOnCheckpoint
	case bounded:
		return operator.CommitAtEndOfInput
	}
	return operator.CommitNever
}

func partitioner(e *graph.Edge, maxPar int) task.Partitioner {
	switch e.Partitioning {
	case graph.Rebalance:
		return &task.Rebalance{}
	case graph.Broadcast:
		return task.Broadcast{}
	case graph.Hash:
		return task.KeyGroupHash{Key: e.Key, Hash: e.KeyHash, MaxParallelism: maxPar}
	}
	return task.Forward{}
}

// mailboxCapacity is how many mails a subtask's mailbox holds. The driver
// posts a few mails per checkpoint to every subtask (complete, aborted,
// drain) while the subtask may be busy in one operator call or waiting on
// its own report to the driver; subtasks read their mailbox before
// records, so 1024 (hundreds of checkpoints' worth) means the driver
// waits in post only on a subtask that is stuck, and never on one that
// is waiting for the driver. A full mailbox delays, it loses no mail.
const mailboxCapacity = 1024

func (dp *deployer) makeSubtask(v *graph.Vertex, i int) {
	id := event.SubtaskID{Vertex: v.Name, Index: i}
	mail := make(chan task.Mail, mailboxCapacity)
	spec := task.Spec{ID: id, Mode: dp.opts.Mode, Storage: dp.fs, Reports: dp.reports, Mail: mail, Now: dp.opts.Now,
		Clock:    dp.opts.Clock,
		Counters: &task.Counters{}, Logger: dp.opts.Logger, Metrics: dp.subtaskMetrics(v, i)}
	if dp.savepoints != nil {
		spec.Savepoints = dp.savepoints.get
	}
	dp.d.counters = append(dp.d.counters, spec.Counters)
	if v.IsSource() {
		dp.d.readers = append(dp.d.readers, spec.Counters)
	}
	if strings.HasPrefix(v.Tail().Name, "Sink") {
		dp.d.writers = append(dp.d.writers, spec.Counters)
	}
	nodes := v.Nodes
	if v.IsSource() {
		spec.Source = dp.sourceSpec(v.Head())
		dp.watchStalls(spec.Source, spec.Counters)
		if dp.opts.Mode == task.AtMostOnce {
			uid := v.Head().UID
			spec.OnSourceExit = func(b []byte) { dp.positions.put(uid, i, b) }
		}
		dp.d.sources = append(dp.d.sources, id)
		nodes = nodes[1:]
	} else {
		spec.Gate = dp.gates[v.ID][i]
		spec.ChannelEdges = dp.channelEdges(v, i)
		spec.ChannelState = dp.restoredChannelState(v, i)
	}
	spec.Parallelism = v.Parallelism
	spec.Debloat = dp.opts.Debloat
	if dp.opts.Mode == task.ExactlyOnce {
		spec.Unaligned, spec.AlignedTimeout = dp.opts.Checkpoint.Unaligned, dp.opts.Checkpoint.AlignedTimeout
		spec.OutputQueue = dp.opts.MaxBuffersPerChannel
	}
	for _, n := range nodes {
		spec.Chain = append(spec.Chain, dp.chained(n, id, v.Parallelism))
	}
	spec.Writers = dp.writers(v.Tail(), i)[""]
	if len(spec.Chain) > 0 {
		last := &spec.Chain[len(spec.Chain)-1]
		last.Side = dp.sideWriters(v.Tail(), i)
	}
	for k := range spec.Chain[:max(0, len(spec.Chain)-1)] {
		spec.Chain[k].Side = dp.sideWriters(nodes[k], i)
	}
	dp.d.subtasks = append(dp.d.subtasks, task.New(spec))
	dp.d.ids = append(dp.d.ids, id)
	dp.d.mail[id] = mail
}

func (dp *deployer) sideWriters(n *graph.Node, i int) map[string][]*task.RecordWriter {
	ws := dp.writers(n, i)
	delete(ws, "")
	return ws
}

func (dp *deployer) sourceSpec(n *graph.Node) *task.SourceSpec {
	m := &operator.Metrics{}
	dp.d.opMetric = append(dp.d.opMetric, opMetric{n.UID, m})
	s := &task.SourceSpec{UID: n.UID, Name: n.Name, Source: n.Source, Parallelism: n.Parallelism,
		Watermarks: n.Watermarks, Timestamps: n.Timestamps, Metrics: m, WatermarkInterval: n.WatermarkInterval,
		StallWarning: dp.opts.WatermarkStallWarning}
	switch {
	case dp.restore.isNew(n.UID):
		// As Flink: an operator without state in the checkpoint starts
		// as configured (its source enumerates its splits), instead of
		// restoring no splits and reading nothing.
		dp.opts.Logger.Info("source has no state in the checkpoint; it starts as configured, as a new operator",
			"uid", n.UID, "name", n.Name, "checkpoint", dp.restore.id)
	case dp.restore != nil:
		s.Restored = dp.restore.of(n.UID)[task.PartSplits]
		if s.Restored == nil {
			s.Restored = [][]byte{}
		}
	}
	return s
}

// watchStalls adds a source subtask to its source's stall check across
// subtasks, which exists when the source has more than one subtask and
// stall warnings (task.StallThreshold) are on.
func (dp *deployer) watchStalls(s *task.SourceSpec, c *task.Counters) {
	th := task.StallThreshold(s)
	if s.Parallelism < 2 || th <= 0 {
		return
	}
	for _, w := range dp.d.stalls {
		if w.uid == s.UID {
			w.counters = append(w.counters, c)
			return
		}
	}
	name := s.Name
	if name == "" {
		name = s.UID
	}
	w := &sourceWatch{sourceStalls: newSourceStalls(name, th), uid: s.UID, counters: []*task.Counters{c}}
	dp.d.opMetric = append(dp.d.opMetric, opMetric{s.UID, w.metrics})
	dp.d.stalls = append(dp.d.stalls, w)
}

// processingTime is the operators' processing time in ms since the epoch.
func (dp *deployer) processingTime() int64 { return dp.opts.Now().UnixMilli() }

func (dp *deployer) chained(n *graph.Node, id event.SubtaskID, par int) task.ChainedOperator {
	m := &operator.Metrics{}
	dp.d.opMetric = append(dp.d.opMetric, opMetric{n.UID, m})
	// Keyed state comes from opts.StateBackend (state.BackendFactory, below);
	// operator state is on the heap whatever the backend, as Flink's
	// DefaultOperatorStateBackend is for every state.backend.type.
	ctx := &operator.Context{Subtask: id, UID: n.UID, Parallelism: par, MaxParallelism: n.MaxParallelism,
		Metrics: m, Now: dp.processingTime, Restored: dp.restore != nil,
		OperatorState: heap.NewOperatorBackend(), KeySelector: n.KeySelector, JobID: dp.opts.JobID,
		Name: n.Name, Commit: dp.commit, CommitRetries: dp.opts.CommitRetries, CommitBackoff: dp.opts.CommitBackoff,
		Clock: dp.opts.Clock}
	if dp.opts.cacheNow {
		ctx.CachedNow = operator.NewCachedNow(dp.processingTime)
		ctx.Now = ctx.CachedNow.Now
	}
	if dp.opts.Mode != task.AtMostOnce {
		ctx.CheckpointInterval = dp.opts.Checkpoint.Interval
		ctx.CheckpointTimeout = dp.opts.Checkpoint.Timeout
	}
	if dp.restore != nil {
		ctx.RestoredCheckpoint = dp.restore.id
	}
	if n.KeySelector != nil {
		r := keygroup.RangeFor(n.MaxParallelism, par, id.Index)
		spec := state.BackendSpec{Operator: n.UID, Subtask: id.Index,
			KeyGroupRange: r, MaxParallelism: n.MaxParallelism, KeyCodec: state.AnyCodec{}, Clock: ctx.Now}
		if dp.restore != nil {
			spec.Files = dp.restore.files
		}
		kb, err := dp.opts.StateBackend.NewKeyedBackend(spec)
		if err != nil {
			// The heap backend cannot fail here (the graph is validated);
			// a disk backend can (its local directory).
			// The attempt fails before any subtask runs (see runAttempt).
			dp.fail(fmt.Errorf("operator %s subtask %d: state.backend.type '%s': %w", n.UID, id.Index, dp.opts.StateBackend.Type(), err))
		}
		if c, ok := kb.(io.Closer); ok {
			dp.d.closers = append(dp.d.closers, c)
		}
		ctx.Keyed = kb
		ctx.Timers = operator.NewTimerService(ctx.Keyed, state.AnyCodec{}, n.MaxParallelism)
	}
	c := task.ChainedOperator{UID: n.UID, Op: n.NewOperator(), Ctx: ctx}
	if dp.restore != nil {
		c.Restored = operatorState(dp.restore, n.UID)
	}
	return c
}

// positions keeps the split positions sources had when they exited, so an
// at-most-once restart resumes where reading stopped instead of replaying.
type positions struct {
	mu struct {
		sync.Mutex
		byUID map[string]map[int][]byte
	}
}

func newPositions() *positions {
	p := &positions{}
	p.mu.byUID = map[string]map[int][]byte{}
	return p
}

func (p *positions) put(uid string, index int, splits []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.byUID[uid] == nil {
		p.mu.byUID[uid] = map[int][]byte{}
	}
	p.mu.byUID[uid][index] = splits
}

// restored returns the positions as restored state (sources only), or nil
// before any source exited.
func (p *positions) restored() *restoredState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.mu.byUID) == 0 {
		return nil
	}
	r := &restoredState{parts: map[string]map[string][][]byte{}}
	for uid, byIndex := range p.mu.byUID {
		idx := make([]int, 0, len(byIndex))
		for i := range byIndex {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		for _, i := range idx {
			r.parts[uid] = map[string][][]byte{task.PartSplits: append(r.parts[uid][task.PartSplits], byIndex[i])}
		}
	}
	return r
}
