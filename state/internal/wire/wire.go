// Package wire holds the varint and length-prefix helpers that the state
// codecs and snapshot formats share. Decoding never panics and never
// allocates more than the input's length: every error is sticky in Reader.
package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrTruncated reports input that ends inside a value.
var ErrTruncated = errors.New("truncated input")

// AppendUvarint appends v as an unsigned varint.
func AppendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

// AppendVarint appends v as a zig-zag signed varint.
func AppendVarint(b []byte, v int64) []byte { return binary.AppendVarint(b, v) }

// AppendBytes appends len(p) as a uvarint, then p.
func AppendBytes(b, p []byte) []byte { return append(AppendUvarint(b, uint64(len(p))), p...) }

// AppendString appends len(s) as a uvarint, then s.
func AppendString(b []byte, s string) []byte {
	return append(AppendUvarint(b, uint64(len(s))), s...)
}

// Reader decodes from a byte slice. The first error sticks: later calls
// return zero values, and Err reports it.
type Reader struct {
	b   []byte
	err error
}

// NewReader returns a Reader over b. It does not copy b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err returns the first decoding error, or nil.
func (r *Reader) Err() error { return r.err }

// Len returns the number of bytes not yet read.
func (r *Reader) Len() int { return len(r.b) }

// Rest returns the unread bytes.
func (r *Reader) Rest() []byte { return r.b }

func (r *Reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.b = nil
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(fmt.Errorf("bad uvarint: %w", ErrTruncated))
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Varint reads a zig-zag signed varint.
func (r *Reader) Varint() int64 {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(fmt.Errorf("bad varint: %w", ErrTruncated))
		return 0
	}
	r.b = r.b[n:]
	return v
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if len(r.b) < 1 {
		r.fail(ErrTruncated)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// Bytes reads a length-prefixed byte string. The result aliases the input.
func (r *Reader) Bytes() []byte {
	n := r.Uvarint()
	if n > uint64(len(r.b)) {
		r.fail(fmt.Errorf("length %d exceeds the %d bytes left: %w", n, len(r.b), ErrTruncated))
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

// Fixed reads exactly n bytes. The result aliases the input.
func (r *Reader) Fixed(n int) []byte {
	if n > len(r.b) {
		r.fail(ErrTruncated)
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

// Count reads a uvarint element count and checks it is plausible: each
// element takes at least minSize bytes of the input, so a corrupt count
// cannot make the caller allocate more than the input's size.
func (r *Reader) Count(minSize int) int {
	n := r.Uvarint()
	if n > uint64(len(r.b)/max(minSize, 1)) {
		r.fail(fmt.Errorf("count %d exceeds what %d bytes can hold: %w", n, len(r.b), ErrTruncated))
		return 0
	}
	return int(n)
}
