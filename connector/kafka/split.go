package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// splitID names the split of a partition: "topic-partition".
func splitID(topic string, partition int32) string {
	return topic + "-" + strconv.Itoa(int(partition))
}

// parseSplitID is the inverse of splitID; topics may contain '-', so the
// partition is what follows the last one.
func parseSplitID(id string) (TopicPartition, error) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 {
		return TopicPartition{}, fmt.Errorf("kafka: split id %q is not topic-partition", id)
	}
	num := id[i+1:]
	p, err := strconv.ParseInt(num, 10, 32)
	if err != nil || num != strconv.FormatInt(p, 10) || p < 0 {
		return TopicPartition{}, fmt.Errorf("kafka: split id %q is not topic-partition", id)
	}
	return TopicPartition{Topic: id[:i], Partition: int32(p)}, nil
}

// owner places the partitions of one topic round-robin over the readers,
// starting at a reader picked by the topic's hash, as Flink's
// KafkaSourceEnumerator does: every reader gets a fair share of each topic.
func owner(tp TopicPartition, readers int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(tp.Topic))
	start := int(h.Sum32() % uint32(readers))
	return (start + int(tp.Partition)) % readers
}

// position is a split's checkpointed state.
type position struct {
	// next is the offset of the next record to read.
	next int64
	// stop is the offset the split ends before; -1: unbounded.
	stop int64
}

const positionVersion = 1

func (p position) encode() []byte {
	b := []byte{positionVersion}
	b = binary.AppendVarint(b, p.next)
	return binary.AppendVarint(b, p.stop)
}

var errCorruptPosition = errors.New("kafka: corrupt split position")

func decodePosition(b []byte) (position, error) {
	if len(b) == 0 || b[0] != positionVersion {
		return position{}, errCorruptPosition
	}
	b = b[1:]
	next, n := binary.Varint(b)
	if n <= 0 {
		return position{}, errCorruptPosition
	}
	stop, m := binary.Varint(b[n:])
	if m <= 0 || n+m != len(b) || next < 0 || stop < -1 {
		return position{}, errCorruptPosition
	}
	return position{next: next, stop: stop}, nil
}

// upsertPositionVersion marks the position of an upsert source's split: the
// position, then the split's table — the last value of every live key —
// which the source needs to turn an upsert into -U/+U after a restore.
const upsertPositionVersion = 2

// encodeUpsertPosition writes p and table (key → last value).
func encodeUpsertPosition(p position, table map[string][]byte) []byte {
	size := 1 + 3*binary.MaxVarintLen64
	for k, v := range table {
		size += 2*binary.MaxVarintLen64 + len(k) + len(v)
	}
	b := make([]byte, 0, size)
	b = append(b, upsertPositionVersion)
	b = binary.AppendVarint(b, p.next)
	b = binary.AppendVarint(b, p.stop)
	b = binary.AppendUvarint(b, uint64(len(table)))
	for k, v := range table {
		b = appendString(b, k)
		b = binary.AppendUvarint(b, uint64(len(v)))
		b = append(b, v...)
	}
	return b
}

// decodeSplitPosition reads a position of either version; the table is
// empty (not nil) for a plain position, which is how an upsert split starts.
func decodeSplitPosition(b []byte) (position, map[string][]byte, error) {
	if len(b) == 0 || b[0] != upsertPositionVersion {
		p, err := decodePosition(b)
		return p, map[string][]byte{}, err
	}
	d := decoder{b: b[1:]}
	p := position{next: d.varint(), stop: d.varint()}
	n := d.uvarint()
	if d.err != nil || p.next < 0 || p.stop < -1 || n > uint64(len(d.b)) {
		return position{}, nil, errCorruptPosition
	}
	table := make(map[string][]byte, n)
	for range n {
		k := d.string()
		table[k] = d.bytes()
	}
	if d.err != nil || len(d.b) != 0 || uint64(len(table)) != n {
		return position{}, nil, errCorruptPosition
	}
	return p, table, nil
}
