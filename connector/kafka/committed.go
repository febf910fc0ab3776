package kafka

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// The committed-checkpoint marker. Kafka keeps no record of which checkpoint
// a transaction belonged to, so every exactly-once transaction also commits,
// inside itself, an offset of a consumer group of its own subtask (Kafka's
// consume-transform-produce path: AddOffsetsToTxn, TxnOffsetCommit) whose
// value is the transaction's checkpoint id. The offset becomes visible
// exactly when the transaction commits. When a writer opens on a restored
// checkpoint it reads the markers of the subtasks it owns: one past the
// restored checkpoint means the sink committed the output of a newer
// checkpoint (deleted or corrupt since), which going on would write again —
// an operator.ReplayError unless AllowReplay. A fresh start deletes the
// markers, as it starts counting afresh.
//
// The group is weir-committed.<prefix>.<subtask>; the offset is kept for
// partition 0 of the topic the transaction last wrote to (an offset commit
// needs an existing partition).

const markerGroupPrefix = "weir-committed."

func markerGroup(prefix string, subtask int) string {
	return markerGroupPrefix + prefix + "." + strconv.Itoa(subtask)
}

// ownsMarkerGroup tells whether group is a marker of a subtask that subtask
// owns at parallelism (the rule of ownsTxnID).
func ownsMarkerGroup(prefix, group string, subtask, parallelism int) bool {
	rest, ok := strings.CutPrefix(group, markerGroupPrefix+prefix+".")
	if !ok {
		return false
	}
	j, err := strconv.Atoi(rest)
	return err == nil && j >= 0 && (j == subtask || (j >= parallelism && j%parallelism == subtask))
}

// markCommitted adds the marker of checkpoint id to the open transaction
// (txnID, pid, epoch).
func markCommitted(ctx context.Context, cl *kgo.Client, c committable, group, topic string) error {
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = c.txnID, c.producerID, c.epoch, group
	resp, err := add.RequestWith(ctx, cl)
	if err == nil {
		err = kerr.ErrorForCode(resp.ErrorCode)
	}
	if err != nil {
		return fmt.Errorf("adding the committed-checkpoint marker (group %s) to %s: %w", group, c.txnID, err)
	}
	oc := kmsg.NewPtrTxnOffsetCommitRequest()
	oc.TransactionalID, oc.Group, oc.ProducerID, oc.ProducerEpoch = c.txnID, group, c.producerID, c.epoch
	oc.Generation, oc.MemberID = -1, ""
	t := kmsg.NewTxnOffsetCommitRequestTopic()
	t.Topic = topic
	p := kmsg.NewTxnOffsetCommitRequestTopicPartition()
	meta := fmt.Sprintf("weir checkpoint %d", c.checkpoint)
	p.Partition, p.Offset, p.LeaderEpoch, p.Metadata = 0, int64(c.checkpoint), -1, &meta
	t.Partitions = append(t.Partitions, p)
	oc.Topics = append(oc.Topics, t)
	ocResp, err := oc.RequestWith(ctx, cl)
	for _, rt := range ocRespTopics(ocResp, err) {
		for _, rp := range rt.Partitions {
			err = errors.Join(err, kerr.ErrorForCode(rp.ErrorCode))
		}
	}
	if err != nil {
		return fmt.Errorf("writing the committed-checkpoint marker (group %s) in %s: %w", group, c.txnID, err)
	}
	return nil
}

func ocRespTopics(r *kmsg.TxnOffsetCommitResponse, err error) []kmsg.TxnOffsetCommitResponseTopic {
	if err != nil || r == nil {
		return nil
	}
	return r.Topics
}

// lastCommitted returns the newest checkpoint whose transaction a subtask
// that subtask owns committed (0: none), and that subtask's marker group.
func lastCommitted(ctx context.Context, adm *kadm.Client, prefix string, subtask, parallelism int) (event.CheckpointID, string, error) {
	groups, err := ownedMarkerGroups(ctx, adm, prefix, subtask, parallelism)
	var newest event.CheckpointID
	var from string
	for _, g := range groups {
		offs, ferr := adm.FetchOffsets(ctx, g)
		if ferr == nil {
			ferr = offs.Error()
		}
		if ferr != nil {
			return 0, "", fmt.Errorf("reading committed-checkpoint marker %s: %w", g, ferr)
		}
		offs.Each(func(o kadm.OffsetResponse) {
			if id := event.CheckpointID(o.At); id > newest {
				newest, from = id, g
			}
		})
	}
	return newest, from, err
}

// forgetCommitted deletes the markers of the subtasks subtask owns.
func forgetCommitted(ctx context.Context, adm *kadm.Client, prefix string, subtask, parallelism int) error {
	groups, err := ownedMarkerGroups(ctx, adm, prefix, subtask, parallelism)
	if err != nil || len(groups) == 0 {
		return err
	}
	resp, err := adm.DeleteGroups(ctx, groups...)
	if err == nil {
		for _, r := range resp {
			if r.Err != nil && !errors.Is(r.Err, kerr.GroupIDNotFound) {
				err = errors.Join(err, fmt.Errorf("group %s: %w", r.Group, r.Err))
			}
		}
	}
	if err != nil {
		return fmt.Errorf("deleting committed-checkpoint markers for a fresh start: %w", err)
	}
	return nil
}

func ownedMarkerGroups(ctx context.Context, adm *kadm.Client, prefix string, subtask, parallelism int) ([]string, error) {
	listed, err := adm.ListGroups(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing committed-checkpoint markers: %w", err)
	}
	var out []string
	for _, g := range listed.Groups() {
		if ownsMarkerGroup(prefix, g, subtask, max(1, parallelism)) {
			out = append(out, g)
		}
	}
	return out, nil
}

// checkNotAhead fails a writer restored behind its sink's committed output
// (see the marker above), unless AllowReplay; on a fresh start it forgets
// the markers.
func (w *txnWriter) checkNotAhead(ctx context.Context, wctx operator.WriterContext) error {
	adm := kadm.NewClient(w.adm)
	if wctx.RestoredCheckpoint == 0 {
		return forgetCommitted(ctx, adm, w.c.cfg.prefix, w.sub, w.par)
	}
	committed, group, err := lastCommitted(ctx, adm, w.c.cfg.prefix, w.sub, w.par)
	if err != nil {
		return fmt.Errorf("kafka sink subtask %d: %w", w.sub, err)
	}
	if committed <= wctx.RestoredCheckpoint {
		return nil
	}
	e := &operator.ReplayError{
		Sink:     fmt.Sprintf("kafka sink (transactional id prefix %q, subtask %d)", w.c.cfg.prefix, w.sub),
		Restored: wctx.RestoredCheckpoint, Committed: committed,
		Evidence: fmt.Sprintf("its committed-checkpoint marker, consumer group %s", group),
		Fix:      "'sink.allow-replay' = 'true' on the table (Go: kafka.AllowReplay())"}
	if !w.c.cfg.allowReplay {
		return e
	}
	w.log.Warn("kafka sink: replay accepted (sink.allow-replay): records of committed checkpoints will be written again",
		"subtask", w.sub, "restored", e.Restored, "committed", committed)
	return nil
}
