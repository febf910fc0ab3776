// Package keygroup maps keys to key groups and key groups to subtasks, as
// Flink's KeyGroupRangeAssignment does, so keyed state can be redistributed
// when the parallelism changes: a key's group never changes (it depends only
// on the key and maxParallelism), only the group's owner does.
package keygroup

import "fmt"

// DefaultMaxParallelism is the number of key groups when a job sets none.
const DefaultMaxParallelism = 128

// Range is the inclusive range [Start, End] of key groups one subtask owns.
// An empty range has End < Start.
type Range struct{ Start, End int }

// Contains reports whether key group g is in the range.
func (r Range) Contains(g int) bool { return g >= r.Start && g <= r.End }

// Len is the number of key groups in the range.
func (r Range) Len() int {
	if r.End < r.Start {
		return 0
	}
	return r.End - r.Start + 1
}

// String implements fmt.Stringer.
func (r Range) String() string { return fmt.Sprintf("[%d..%d]", r.Start, r.End) }

// Murmur mixes a 32-bit hash with the MurmurHash3 finaliser, so keys whose
// hashes differ only in high bits still spread over key groups.
func Murmur(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// ForHash returns the key group of a key whose hash is h.
func ForHash(h uint64, maxParallelism int) int {
	folded := uint32(h) ^ uint32(h>>32)
	return int(Murmur(folded) % uint32(maxParallelism))
}

// OperatorIndex returns the subtask that owns key group g.
func OperatorIndex(g, maxParallelism, parallelism int) int {
	return g * parallelism / maxParallelism
}

// RangeFor returns the key groups subtask index owns.
func RangeFor(maxParallelism, parallelism, index int) Range {
	start := (index*maxParallelism + parallelism - 1) / parallelism
	end := ((index+1)*maxParallelism+parallelism-1)/parallelism - 1
	return Range{Start: start, End: end}
}
