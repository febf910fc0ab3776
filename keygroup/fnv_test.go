package keygroup

import (
	"hash/fnv"
	"testing"
)

// TestFNVStringIsFNV1a: the key hash is hash/fnv's 64-bit FNV-1a, so key
// groups of keys are what they were (state restores to the same groups),
// and computing it allocates nothing.
func TestFNVStringIsFNV1a(t *testing.T) {
	for _, s := range []string{"", "a", "auction-1001", "\x00\xff\x80 binary", string(make([]byte, 1000))} {
		h := fnv.New64a()
		h.Write([]byte(s))
		if got, want := fnvString(s), h.Sum64(); got != want {
			t.Errorf("fnvString(%q) = %x, want %x", s, got, want)
		}
	}
	key := "a key longer than thirty-two bytes, which []byte(s) would copy"
	if n := testing.AllocsPerRun(100, func() { ForKey(key, 128) }); n != 0 {
		t.Errorf("ForKey of a string allocates %v times", n)
	}
}
