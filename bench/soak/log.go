package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// entry is one offset of a partition's log: a data record or a
// transaction marker.
type entry struct {
	offset     int64
	producerID int64
	txn        bool // a data record inside a transaction
	control    bool // a COMMIT or ABORT marker
	commit     bool // the marker's kind
	value      []byte
}

// ends are a partition's high watermark and last stable offset.
type ends struct{ hwm, lso int64 }

// listEnds returns HWM and LSO of every partition of topic.
func listEnds(ctx context.Context, cl *kgo.Client, topic string, partitions int32) (map[int32]ends, error) {
	out := map[int32]ends{}
	for _, iso := range []int8{0, 1} {
		req := kmsg.NewPtrListOffsetsRequest()
		req.IsolationLevel = iso
		t := kmsg.NewListOffsetsRequestTopic()
		t.Topic = topic
		for p := int32(0); p < partitions; p++ {
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp = p, -1
			t.Partitions = append(t.Partitions, rp)
		}
		req.Topics = append(req.Topics, t)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			return nil, fmt.Errorf("list offsets of %s: %w", topic, err)
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return nil, fmt.Errorf("list offsets of %s[%d]: %w", topic, rp.Partition, err)
				}
				e := out[rp.Partition]
				if iso == 0 {
					e.hwm = rp.Offset
				} else {
					e.lso = rp.Offset
				}
				out[rp.Partition] = e
			}
		}
	}
	return out, nil
}

// readLog reads every partition of topic from its start up to stop
// (HWM for read_uncommitted, LSO for read_committed), markers included,
// so that the caller sees exactly what a consumer of that isolation level
// is served, offset by offset.
func readLog(ctx context.Context, brokers, topic string, stop map[int32]int64, committed bool) (map[int32][]entry, error) {
	parts := map[int32]kgo.Offset{}
	left := 0
	for p, end := range stop {
		if end > 0 {
			parts[p] = kgo.NewOffset().AtStart()
			left++
		}
	}
	out := map[int32][]entry{}
	if left == 0 {
		return out, nil
	}
	iso := kgo.ReadUncommitted()
	if committed {
		iso = kgo.ReadCommitted()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.FetchIsolationLevel(iso), kgo.KeepControlRecords(),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: parts}), kgo.FetchMaxWait(500*time.Millisecond))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	done := map[int32]bool{}
	for left > 0 {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("reading %s: %w (done %d of %d partitions)", topic, err, len(stop)-left, len(stop))
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("reading %s[%d]: %w", t, p, err) })
		if ferr != nil {
			return nil, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			if done[r.Partition] {
				return
			}
			e := entry{offset: r.Offset, producerID: r.ProducerID, txn: r.Attrs.IsTransactional() && !r.Attrs.IsControl(),
				control: r.Attrs.IsControl(), value: r.Value}
			if e.control && len(r.Key) >= 4 {
				e.commit = binary.BigEndian.Uint16(r.Key[2:4]) == 1
			}
			out[r.Partition] = append(out[r.Partition], e)
			if r.Offset+1 >= stop[r.Partition] {
				done[r.Partition] = true
				left--
			}
		})
	}
	for _, es := range out {
		sort.Slice(es, func(i, j int) bool { return es[i].offset < es[j].offset })
	}
	return out, nil
}

// outcome is what the markers say of a data record.
type outcome int

const (
	committedRec outcome = iota // committed, or written outside a transaction
	abortedRec
	openRec // no marker yet
)

// resolve classifies every data record of a read_uncommitted log by the
// markers that follow it: a transactional record belongs to its
// producer's transaction, which the producer's next marker in the same
// partition ends.
func resolve(es []entry) map[int64]outcome {
	out := map[int64]outcome{}
	pending := map[int64][]int64{} // producer id → offsets of its open transaction
	for _, e := range es {
		switch {
		case e.control:
			o := abortedRec
			if e.commit {
				o = committedRec
			}
			for _, off := range pending[e.producerID] {
				out[off] = o
			}
			delete(pending, e.producerID)
		case e.txn:
			pending[e.producerID] = append(pending[e.producerID], e.offset)
		default:
			out[e.offset] = committedRec
		}
	}
	for _, offs := range pending {
		for _, off := range offs {
			out[off] = openRec
		}
	}
	return out
}
