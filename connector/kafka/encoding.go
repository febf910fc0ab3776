package kafka

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/weirstream/weir/event"
)

// committable is what a new process needs to finish a pre-committed
// transaction: EndTxn takes the transactional id, producer id and epoch.
type committable struct {
	txnID      string
	producerID int64
	epoch      int16
	checkpoint event.CheckpointID
}

func (c committable) String() string {
	return fmt.Sprintf("transaction %s (producer id %d, epoch %d, checkpoint %d)", c.txnID, c.producerID, c.epoch, c.checkpoint)
}

const encodingVersion = 1

var errCorrupt = errors.New("kafka: corrupt sink state")

func (c committable) encode() []byte {
	b := []byte{encodingVersion}
	b = appendString(b, c.txnID)
	b = binary.AppendVarint(b, c.producerID)
	b = binary.AppendVarint(b, int64(c.epoch))
	return binary.AppendVarint(b, int64(c.checkpoint))
}

func decodeCommittable(b []byte) (committable, error) {
	d := decoder{b: b}
	if d.byte() != encodingVersion {
		return committable{}, fmt.Errorf("%w: committable version", errCorrupt)
	}
	c := committable{txnID: d.string(), producerID: d.varint()}
	ep := d.varint()
	c.checkpoint = event.CheckpointID(d.varint())
	if d.err != nil || len(d.b) != 0 || ep < 0 || ep > 1<<15-1 || c.txnID == "" {
		return committable{}, fmt.Errorf("%w: committable", errCorrupt)
	}
	c.epoch = int16(ep)
	return c, nil
}

// encodeWriterState writes the pre-committed, uncommitted transactional ids.
func encodeWriterState(ids []string) []byte {
	b := []byte{encodingVersion}
	b = binary.AppendUvarint(b, uint64(len(ids)))
	for _, id := range ids {
		b = appendString(b, id)
	}
	return b
}

func decodeWriterState(b []byte) ([]string, error) {
	d := decoder{b: b}
	if d.byte() != encodingVersion {
		return nil, fmt.Errorf("%w: writer state version", errCorrupt)
	}
	n := d.uvarint()
	if n > uint64(len(b)) {
		return nil, fmt.Errorf("%w: writer state", errCorrupt)
	}
	ids := make([]string, 0, n)
	for i := uint64(0); i < n; i++ {
		ids = append(ids, d.string())
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, fmt.Errorf("%w: writer state", errCorrupt)
	}
	return ids, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// decoder reads what the encoders above wrote; the first failure sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail() { d.err, d.b = errCorrupt, nil }

func (d *decoder) byte() byte {
	if len(d.b) == 0 {
		d.fail()
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

// bytes reads a length-prefixed byte string into a copy, never nil: an
// empty Kafka value is not a tombstone.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	out := make([]byte, n)
	copy(out, d.b)
	d.b = d.b[n:]
	return out
}
