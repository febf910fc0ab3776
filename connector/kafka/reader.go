package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// reader reads the splits of one source subtask.
//
// Threading: the subtask goroutine calls every SourceReader method and owns
// splits, cur and snapshots. A fetch goroutine polls the kgo client and
// hands batches over through fetched; a discovery goroutine hands new
// partitions over through added; a commit goroutine commits group offsets.
// Each signals notify (Available) after a hand-over. Only known is shared,
// under mu.
type reader struct {
	cfg    *sourceConfig
	rctx   operator.ReaderContext
	ctx    context.Context
	cancel context.CancelFunc
	cl     *kgo.Client
	decode decodeFunc
	upsert UpsertDecoder // non-nil: an upsert source (see emitUpsert)
	// upsertMsg: the upsert source reads record metadata (see
	// emitUpsertMeta).
	upsertMsg UpsertMessageDecoder
	metrics   *SourceMetrics
	log       *slog.Logger
	dlq       *deadLetters
	rm        readerMetrics

	splits    map[TopicPartition]*splitState
	order     []TopicPartition
	active    int // splits not finished
	cur       fetchBatch
	idx       int
	snapshots []offsetSnapshot
	bad       int64 // bad records seen by this reader (for log rate limiting)
	// endedAtAdd are splits added already at their stopping offset; the
	// next Poll reports them finished (AddSplits has no output to tell).
	endedAtAdd []string

	fetched    chan fetchBatch
	added      chan []discovered
	unlisted   []TopicPartition // splits added since the last listEnds
	commits    chan kadm.Offsets
	notify     chan struct{}
	closing    chan struct{} // closed by Close: the commit goroutine commits what is pending and exits
	commitDone chan struct{}

	mu struct {
		sync.Mutex
		known       map[TopicPartition]bool
		discovering bool
	}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

type splitState struct {
	id       string
	tp       TopicPartition
	pos      position
	finished bool
	// table is an upsert source's last value of every live key in the
	// split; nil for other sources.
	table map[string][]byte
	// end is the offset the last fetch of the partition could read up to
	// (see fetchEnds), or the end listed when the split was added: the lag
	// is end - pos.next. -1 until either is known.
	end    int64
	gauges splitGauges
}

type fetchBatch struct {
	recs []*kgo.Record
	ends map[TopicPartition]int64 // what each partition could be read up to (fetchEnds)
	err  error                    // after recs: the fetch goroutine has stopped
}

type discovered struct {
	tp         TopicPartition
	start, end int64 // end: listed with start, for the lag (-1: unknown)
}

type offsetSnapshot struct {
	id      event.CheckpointID
	offsets kadm.Offsets
}

// readerDecoders are how a reader reads records: decode, or upsert when set.
type readerDecoders struct {
	decode decodeFunc
	upsert UpsertDecoder
	// upsertMsg, when set, decodes upsert records with their metadata.
	upsertMsg UpsertMessageDecoder
}

func newReader(rctx operator.ReaderContext, cfg *sourceConfig, base []kgo.Opt, dec readerDecoders, m *SourceMetrics,
	log *slog.Logger) (*reader, error) {
	iso := kgo.ReadCommitted()
	if cfg.readUncommitted {
		iso = kgo.ReadUncommitted()
	}
	opts := append([]kgo.Opt{kgo.FetchMaxWait(500 * time.Millisecond)}, base...)
	opts = append(opts, kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka source: %w", err)
	}
	parent := rctx.Context
	if parent == nil {
		parent = context.Background()
	}
	r := &reader{cfg: cfg, rctx: rctx, cl: cl, decode: dec.decode, upsert: dec.upsert, upsertMsg: dec.upsertMsg, metrics: m, log: log,
		splits: map[TopicPartition]*splitState{}, fetched: make(chan fetchBatch, 2),
		added: make(chan []discovered, 1), commits: make(chan kadm.Offsets, 1), notify: make(chan struct{}, 1),
		closing: make(chan struct{}), commitDone: make(chan struct{}), rm: newReaderMetrics(rctx)}
	r.ctx, r.cancel = context.WithCancel(parent)
	r.mu.known = map[TopicPartition]bool{}
	if cfg.badRecords.kind == badDeadLetter {
		r.dlq = &deadLetters{topic: cfg.badRecords.topic, opts: base}
	}
	r.goRun(r.fetchLoop)
	if cfg.commitOffsets {
		go r.commitLoop()
	} else {
		close(r.commitDone)
	}
	return r, nil
}

// goRun starts a goroutine that Close waits for.
func (r *reader) goRun(f func()) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		f()
	}()
}

func (r *reader) signal() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// AddSplits starts reading splits at their positions.
func (r *reader) AddSplits(splits []operator.SplitState) error {
	consume := map[string]map[int32]kgo.Offset{}
	for _, sp := range splits {
		tp, err := parseSplitID(sp.ID)
		if err != nil {
			return err
		}
		pos, table, err := decodeSplitPosition(sp.Position)
		if err != nil {
			return fmt.Errorf("kafka source: split %s: %w", sp.ID, err)
		}
		r.addSplit(tp, pos, table, consume)
	}
	r.cl.AddConsumePartitions(consume)
	r.listEnds()
	r.startDiscovery()
	return nil
}

func (r *reader) addSplit(tp TopicPartition, pos position, table map[string][]byte, consume map[string]map[int32]kgo.Offset) {
	if _, dup := r.splits[tp]; dup {
		return
	}
	st := &splitState{id: splitID(tp.Topic, tp.Partition), tp: tp, pos: pos, gauges: r.rm.forSplit(tp), end: -1}
	if r.upsert != nil {
		st.table = table
	}
	r.splits[tp] = st
	r.order = append(r.order, tp)
	r.mu.Lock()
	r.mu.known[tp] = true
	r.mu.Unlock()
	if pos.stop >= 0 && pos.next >= pos.stop {
		st.finished = true
		r.endedAtAdd = append(r.endedAtAdd, st.id)
		return
	}
	r.active++
	r.unlisted = append(r.unlisted, tp)
	if consume[tp.Topic] == nil {
		consume[tp.Topic] = map[int32]kgo.Offset{}
	}
	consume[tp.Topic][tp.Partition] = kgo.NewOffset().At(pos.next)
}

// Poll emits what the fetch goroutine handed over, up to maxPollRecords.
func (r *reader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	r.reportEndedAtAdd(out)
	r.takeDiscovered(out)
	if r.idx >= len(r.cur.recs) {
		if r.cur.err != nil {
			return 0, fmt.Errorf("kafka source: %w", r.cur.err)
		}
		select {
		case b := <-r.fetched:
			r.cur, r.idx = b, 0
			r.takeEnds(b.ends)
		default:
		}
	}
	defer r.publishLag()
	for n := 0; r.idx < len(r.cur.recs) && n < r.cfg.maxPollRecords; {
		rec := r.cur.recs[r.idx]
		r.idx++
		emitted, err := r.handle(rec, out)
		if err != nil {
			return 0, err
		}
		if emitted {
			n++
		}
	}
	return r.status(), nil
}

// reportEndedAtAdd tells the output about splits that had nothing to read
// when added (an empty partition of a bounded source, a restored finished
// split): without it the runtime would keep them in its watermark minimum
// at MinWatermark until the end of input.
func (r *reader) reportEndedAtAdd(out operator.ReaderOutput) {
	for _, id := range r.endedAtAdd {
		operator.ReportSplitFinished(out, id)
	}
	r.endedAtAdd = nil
}

func (r *reader) status() operator.ReaderStatus {
	switch {
	case r.cfg.stop != nil && r.active == 0:
		return operator.EndOfInput
	case r.idx < len(r.cur.recs) || len(r.fetched) > 0 || len(r.added) > 0 || r.cur.err != nil:
		return operator.MoreAvailable
	}
	return operator.NothingAvailable
}

// handle emits, skips or dead-letters one fetched record and moves its
// split's position past it.
func (r *reader) handle(rec *kgo.Record, out operator.ReaderOutput) (bool, error) {
	st := r.splits[TopicPartition{rec.Topic, rec.Partition}]
	if st == nil || st.finished || rec.Offset < st.pos.next {
		return false, nil
	}
	if st.pos.stop >= 0 && rec.Offset >= st.pos.stop {
		r.finish(st, out)
		return false, nil
	}
	emitted := 0
	if !rec.Attrs.IsControl() { // transaction markers only move the position
		r.rm.bytesRead(rec)
		var err error
		if emitted, err = r.emit(st, rec, out); err != nil {
			return false, err
		}
	}
	st.pos.next = rec.Offset + 1
	if st.pos.stop >= 0 && st.pos.next >= st.pos.stop {
		r.finish(st, out)
	}
	return emitted > 0, nil
}

// emit decodes one data record and emits what it gives (an upsert record
// may give two rows, or none); a bad record goes to the policy.
func (r *reader) emit(st *splitState, rec *kgo.Record, out operator.ReaderOutput) (int, error) {
	if st.table != nil {
		return r.emitUpsert(st, rec, out)
	}
	v, err := r.decode(rec)
	if err != nil {
		return 0, r.badRecord(rec, err)
	}
	ts := rec.Timestamp.UnixMilli()
	vs, ok := v.(multi)
	if !ok {
		out.Collect(st.id, event.Record{Value: v, Timestamp: ts})
		return 1, nil
	}
	for _, v := range vs {
		out.Collect(st.id, event.Record{Value: v, Timestamp: ts})
	}
	return len(vs), nil
}

func (r *reader) finish(st *splitState, out operator.ReaderOutput) {
	if st.finished {
		return
	}
	st.finished = true
	r.active--
	r.cl.RemoveConsumePartitions(map[string][]int32{st.tp.Topic: {st.tp.Partition}})
	operator.ReportSplitFinished(out, st.id)
}

func (r *reader) badRecord(rec *kgo.Record, cause error) error {
	if !IsRecordFault(cause) {
		return fmt.Errorf("kafka source: reading topic %s partition %d offset %d: %w", rec.Topic, rec.Partition, rec.Offset, cause)
	}
	r.bad++
	switch r.cfg.badRecords.kind {
	case badSkip:
		r.metrics.RecordsSkipped.Add(1)
		r.rm.inErrors.Add(1)
	case badDeadLetter:
		if err := r.dlq.send(r.ctx, rec, cause); err != nil {
			return err
		}
		r.metrics.RecordsDeadLettered.Add(1)
		r.rm.inErrors.Add(1)
		r.rm.deadLettered.Add(1)
	default:
		return &RecordError{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset, Err: cause, Fix: r.cfg.badRecordFix}
	}
	if r.bad <= 10 || r.bad%1000 == 0 {
		r.log.Warn("kafka source: bad record", "policy", r.cfg.badRecords.String(), "topic", rec.Topic,
			"partition", rec.Partition, "offset", rec.Offset, "err", cause, "seen_by_reader", r.bad)
	}
	return nil
}

// Available is signalled after a hand-over from a fetch or discovery.
func (r *reader) Available() <-chan struct{} { return r.notify }

// SnapshotState returns every split's position: after the last record
// emitted or skipped.
func (r *reader) SnapshotState(id event.CheckpointID) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, 0, len(r.order))
	offs := kadm.Offsets{}
	for _, tp := range r.order {
		st := r.splits[tp]
		pos := st.pos.encode()
		if st.table != nil {
			pos = encodeUpsertPosition(st.pos, st.table)
		}
		out = append(out, operator.SplitState{ID: st.id, Position: pos})
		offs.Add(kadm.Offset{Topic: tp.Topic, Partition: tp.Partition, At: st.pos.next, LeaderEpoch: -1})
	}
	if r.cfg.commitOffsets && id > 0 {
		r.snapshots = append(r.snapshots, offsetSnapshot{id, offs})
		if len(r.snapshots) > 32 { // completions of old checkpoints will not come
			r.snapshots = r.snapshots[1:]
		}
	}
	return out, nil
}

// NotifyCheckpointComplete commits the positions of checkpoint id to the
// consumer group, for monitoring only, off the subtask goroutine.
func (r *reader) NotifyCheckpointComplete(id event.CheckpointID) error {
	for i, s := range r.snapshots {
		if s.id == id {
			r.snapshots = r.snapshots[i+1:]
			r.offerCommit(s.offsets)
			break
		}
	}
	return nil
}

// offerCommit hands offsets to the commit goroutine, replacing offsets it
// has not taken yet: only the latest matter.
func (r *reader) offerCommit(o kadm.Offsets) {
	select {
	case r.commits <- o:
		return
	default:
	}
	select {
	case <-r.commits:
	default:
	}
	select {
	case r.commits <- o:
	default:
	}
}

// Close stops the goroutines and the clients. The offsets of the last
// completed checkpoint are committed first: at the end of a bounded job the
// completion comes right before Close.
func (r *reader) Close() error {
	r.closeOnce.Do(func() {
		close(r.closing)
		<-r.commitDone
		r.cancel()
		r.cl.Close()
		r.wg.Wait()
		if r.dlq != nil {
			r.dlq.close()
		}
	})
	return nil
}

// fetchLoop polls the client and hands batches to Poll.
func (r *reader) fetchLoop() {
	for {
		fs := r.cl.PollRecords(r.ctx, r.cfg.maxPollRecords)
		if r.ctx.Err() != nil || fs.IsClientClosed() {
			return
		}
		var fatal error
		fs.EachError(func(t string, p int32, err error) {
			if e := r.fetchError(t, p, err); e != nil && fatal == nil {
				fatal = e
			}
		})
		b := fetchBatch{recs: fs.Records(), ends: fetchEnds(fs, !r.cfg.readUncommitted), err: fatal}
		if len(b.recs) == 0 && b.err == nil {
			continue
		}
		select {
		case r.fetched <- b:
			r.signal()
		case <-r.ctx.Done():
			return
		}
		if fatal != nil {
			return
		}
	}
}

// fetchError logs what the client recovers from by itself and returns what
// it does not (untyped errors: corrupt batches, failed validation).
func (r *reader) fetchError(topic string, partition int32, err error) error {
	var loss *kgo.ErrDataLoss
	var ke *kerr.Error
	switch {
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return nil
	case errors.As(err, &loss):
		r.metrics.OffsetResets.Add(1)
		r.log.Warn("kafka source: position out of range, reset to the earliest offset", "topic", topic,
			"partition", partition, "err", err)
		return nil
	case errors.As(err, &ke):
		r.log.Warn("kafka source: fetch error, retrying", "topic", topic, "partition", partition, "err", err)
		return nil
	}
	return fmt.Errorf("fetching topic %s partition %d: %w", topic, partition, err)
}

// startDiscovery starts looking for new partitions, once, on an unbounded
// source with discovery on.
func (r *reader) startDiscovery() {
	if r.cfg.discovery <= 0 || r.cfg.stop != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.discovering {
		return
	}
	r.mu.discovering = true
	r.goRun(r.discoverLoop)
}

func (r *reader) discoverLoop() {
	a := &admin{cl: r.cl, adm: kadm.NewClient(r.cl), isolation: r.isolation()}
	t := time.NewTicker(r.cfg.discovery)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-r.ctx.Done():
			return
		}
		found, err := r.discover(a)
		if err != nil {
			r.log.Warn("kafka source: partition discovery failed", "topics", r.cfg.topics, "err", err)
			continue
		}
		if len(found) == 0 {
			continue
		}
		select {
		case r.added <- found:
			r.signal()
		case <-r.ctx.Done():
			return
		}
	}
}

// discover lists the topics' partitions and returns the new ones this
// reader owns, each at its earliest offset.
func (r *reader) discover(a *admin) ([]discovered, error) {
	ctx, cancel := context.WithTimeout(r.ctx, time.Minute)
	defer cancel()
	tps, err := a.partitions(ctx, r.cfg.topics)
	if err != nil {
		return nil, err
	}
	var fresh []TopicPartition
	r.mu.Lock()
	for _, tp := range tps {
		if !r.mu.known[tp] && owner(tp, max(1, r.rctx.Parallelism)) == r.rctx.Subtask.Index {
			fresh = append(fresh, tp)
		}
	}
	r.mu.Unlock()
	if len(fresh) == 0 {
		return nil, nil
	}
	starts, err := a.listOffsets(ctx, fresh, -2)
	if err != nil {
		return nil, err
	}
	ends, err := a.listOffsets(ctx, fresh, -1)
	if err != nil {
		r.log.Debug("kafka source: listing the end offsets of new partitions failed; their lag stays unknown until a fetch", "err", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]discovered, 0, len(fresh))
	for _, tp := range fresh {
		r.mu.known[tp] = true
		end, ok := ends[tp]
		if !ok {
			end = -1
		}
		out = append(out, discovered{tp, starts[tp], end})
	}
	return out, nil
}

// takeDiscovered adds discovered partitions as splits.
func (r *reader) takeDiscovered(out operator.ReaderOutput) {
	select {
	case found := <-r.added:
		consume := map[string]map[int32]kgo.Offset{}
		for _, d := range found {
			r.addSplit(d.tp, position{next: d.start, stop: -1}, map[string][]byte{}, consume)
			r.takeEnds(map[TopicPartition]int64{d.tp: d.end})
			operator.ReportSplitAdded(out, splitID(d.tp.Topic, d.tp.Partition))
			r.metrics.PartitionsDiscovered.Add(1)
			r.log.Info("kafka source: new partition", "split", splitID(d.tp.Topic, d.tp.Partition), "offset", d.start)
		}
		r.cl.AddConsumePartitions(consume)
		r.unlisted = nil // listed by discover
	default:
	}
}

// commitLoop commits offsets to the consumer group. Failures only count:
// the job never reads these offsets back.
func (r *reader) commitLoop() {
	defer close(r.commitDone)
	adm := kadm.NewClient(r.cl)
	commit := func(o kadm.Offsets, timeout time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := adm.CommitAllOffsets(ctx, r.cfg.groupID, o); err != nil {
			r.metrics.OffsetCommitFailures.Add(1)
			r.log.Debug("kafka source: committing offsets to the group failed", "group", r.cfg.groupID, "err", err)
			return
		}
		o.Each(func(off kadm.Offset) { r.rm.forSplit(TopicPartition{off.Topic, off.Partition}).committed.Store(off.At) })
	}
	for {
		select {
		case o := <-r.commits:
			commit(o, 30*time.Second)
		case <-r.closing:
			select {
			case o := <-r.commits:
				commit(o, 5*time.Second)
			default:
			}
			return
		}
	}
}
