package keygroup

import (
	"fmt"
	"math"
)

// HashKey returns a hash of key that is stable across processes and
// restarts (unlike hash/maphash, whose seeds are random), so a key lands in
// the same key group after a restore. Strings, integers, floats and booleans
// hash by value; other comparable types hash by their Go-syntax
// representation (%#v), which is stable for plain structs of those types.
func HashKey(key any) uint64 {
	switch k := key.(type) {
	case string:
		return fnvString(k)
	case int:
		return mix64(uint64(k))
	case int64:
		return mix64(uint64(k))
	case int32:
		return mix64(uint64(k))
	case uint64:
		return mix64(k)
	case uint32:
		return mix64(uint64(k))
	case float64:
		return mix64(math.Float64bits(k))
	case bool:
		if k {
			return mix64(1)
		}
		return mix64(0)
	case []byte:
		return fnvString(string(k))
	}
	return fnvString(fmt.Sprintf("%#v", key))
}

// HashBytes is HashKey(string(b)), without the string.
func HashBytes(b []byte) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for _, c := range b {
		h ^= uint64(c)
		h *= prime64
	}
	return h
}

// HashString is HashKey(s), without boxing s.
func HashString(s string) uint64 { return fnvString(s) }

// ForKey returns the key group of key.
func ForKey(key any, maxParallelism int) int {
	return ForHash(HashKey(key), maxParallelism)
}

// fnvString is the 64-bit FNV-1a hash of s (hash/fnv's New64a), computed
// in place: no hasher and no copy of s on the heap per key.
func fnvString(s string) uint64 {
	const offset64, prime64 = 14695981039346656037, 1099511628211
	h := uint64(offset64)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}

// mix64 is the SplitMix64 finaliser: it spreads consecutive integers.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
