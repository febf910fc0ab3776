// Package keyed holds what the keyed state backends share: the canonical
// snapshot blob format — every backend writes and reads the same blobs, so
// a checkpoint does not depend on the backend that wrote it — and TTL
// arithmetic. The format is described in state/heap's package doc.
package keyed

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// Magic starts every keyed snapshot blob; its last byte is the format
// version.
const Magic = "WHK1"

// IncrementalMagic starts the manifest of an incremental snapshot of the
// Pebble backend, which names files instead of holding entries.
const IncrementalMagic = state.PebbleIncrementalMagic

// HeapIncrementalMagic starts the manifest of an incremental checkpoint of
// the heap backend, which names a base and deltas in shared files.
const HeapIncrementalMagic = state.HeapIncrementalMagic

// Corrupt returns an error wrapping state.ErrCorrupt.
func Corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{state.ErrCorrupt}, args...)...)
}

// BlobVisitor receives what ReadBlob parses.
type BlobVisitor interface {
	// State starts the entries of a state; hasTS says whether its
	// payloads carry timestamps.
	State(name string, kind state.Kind, hasTS bool) error
	// Entry is one key's payload (key and payload alias the blob) in key
	// group kg of the state last started.
	Entry(kg int, key, payload []byte) error
}

// ReadBlob parses a keyed snapshot blob, calling v for every state and for
// every entry whose key group own accepts. Errors wrap state.ErrCorrupt or,
// for a different maxParallelism, state.ErrIncompatible.
func ReadBlob(blob []byte, maxParallelism int, own func(kg int) bool, v BlobVisitor) error {
	r := wire.NewReader(blob)
	if strings.HasPrefix(string(blob), IncrementalMagic) {
		return fmt.Errorf("%w: the checkpoint is an incremental checkpoint of the pebble state backend; "+
			"restore it with state.backend.type 'pebble' (or take a savepoint, which any backend restores)", state.ErrIncompatible)
	}
	if strings.HasPrefix(string(blob), HeapIncrementalMagic) {
		return fmt.Errorf("%w: the checkpoint is an incremental checkpoint of the hashmap state backend; "+
			"restore it with state.backend.type 'hashmap' (or take a savepoint, which any backend restores)", state.ErrIncompatible)
	}
	if magic := r.Fixed(len(Magic)); string(magic) != Magic {
		return Corrupt("bad magic %q, want %q", magic, Magic)
	}
	if mp := r.Uvarint(); r.Err() == nil && mp != uint64(maxParallelism) {
		return fmt.Errorf("%w: snapshot has max parallelism %d, backend %d; max parallelism cannot change across restores",
			state.ErrIncompatible, mp, maxParallelism)
	}
	p := blobReader{r: r, maxPar: maxParallelism, own: own, v: v}
	n := r.Count(4)
	for i := 0; i < n && r.Err() == nil; i++ {
		if err := p.state(); err != nil {
			return err
		}
	}
	if r.Err() != nil || r.Len() != 0 {
		return Corrupt("keyed snapshot: %v, %d trailing bytes", r.Err(), r.Len())
	}
	return nil
}

type blobReader struct {
	r      *wire.Reader
	maxPar int
	own    func(int) bool
	v      BlobVisitor
}

func (p *blobReader) state() error {
	r := p.r
	name, kind, flags := string(r.Bytes()), state.Kind(r.Byte()), r.Byte()
	groups := r.Count(2)
	if r.Err() != nil {
		return nil // reported by ReadBlob
	}
	if kind < state.KindValue || kind > state.KindAggregating || flags > 1 {
		return Corrupt("state %q: kind %d, flags %d", name, kind, flags)
	}
	if err := p.v.State(name, kind, flags == 1); err != nil {
		return err
	}
	for g := 0; g < groups && r.Err() == nil; g++ {
		if err := p.group(name); err != nil {
			return err
		}
	}
	return nil
}

func (p *blobReader) group(name string) error {
	r := p.r
	kg, n := r.Uvarint(), r.Count(2)
	if r.Err() != nil {
		return nil
	}
	if kg >= uint64(p.maxPar) {
		return Corrupt("state %q: key group %d ≥ max parallelism %d", name, kg, p.maxPar)
	}
	own := p.own(int(kg))
	for e := 0; e < n && r.Err() == nil; e++ {
		kb, pl := r.Bytes(), r.Bytes()
		if r.Err() != nil || !own {
			continue
		}
		if err := p.v.Entry(int(kg), kb, pl); err != nil {
			return err
		}
	}
	return nil
}

// TTL is a state's time-to-live, resolved from its state.TTLConfig.
type TTL struct {
	MS     int64 // 0: no TTL
	OnRead bool  // reads refresh the timestamp too
}

// NewTTL resolves c (nil: no TTL).
func NewTTL(c *state.TTLConfig) TTL {
	return TTL{MS: c.Millis(), OnRead: c != nil && c.UpdateType == state.OnReadAndWrite}
}

// Enabled reports whether the state has a TTL.
func (t TTL) Enabled() bool { return t.MS > 0 }

// Expired reports whether an entry last refreshed at ts (ms) has expired at
// now: Flink's "lastAccess + ttl <= now".
func (t TTL) Expired(ts, now int64) bool { return t.MS > 0 && now-ts >= t.MS }

// MaxMaxParallelism is Flink's upper bound on the number of key groups.
const MaxMaxParallelism = 1 << 15

// ValidateKeyGroups checks a backend's max parallelism and key group range;
// backend names the backend in the error.
func ValidateKeyGroups(backend string, maxParallelism int, r keygroup.Range) error {
	if maxParallelism < 1 || maxParallelism > MaxMaxParallelism {
		return fmt.Errorf("%s: max parallelism %d out of range [1, %d]", backend, maxParallelism, MaxMaxParallelism)
	}
	if r.Len() > 0 && (r.Start < 0 || r.End >= maxParallelism) {
		return fmt.Errorf("%s: key group range %v outside [0, %d); use keygroup.RangeFor", backend, r, maxParallelism)
	}
	return nil
}

// DecodeAll decodes exactly one value from b.
func DecodeAll(c state.Codec[any], b []byte) (any, error) {
	v, rest, err := c.Decode(b)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, Corrupt("%d bytes after the value", len(rest))
	}
	return v, nil
}

// DecodeKey decodes exactly one key, which must be comparable: a corrupt
// blob must yield an error, not a panic on hashing.
func DecodeKey(c state.Codec[any], b []byte) (any, error) {
	k, err := DecodeAll(c, b)
	if err == nil && k != nil && !reflect.ValueOf(k).Comparable() {
		err = Corrupt("decoded key of type %T is not comparable", k)
	}
	return k, err
}

// KeyString renders a key for an error message: a string key quoted, its
// bytes that do not print escaped (SQL operators key by binary strings,
// which printed raw garble the message), any other key as fmt prints it.
func KeyString(k any) string {
	if s, ok := k.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(k)
}
