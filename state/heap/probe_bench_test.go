package heap

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMapProbeBySize probes a keyMap's string map (SQL's keys: 9
// bytes, a tag and a BIGINT) at random, at three sizes: what one probe of
// the state costs once it outgrows the caches (issue 16's scale goal; the
// seventeenth session's README section). Run with
// go test -run '^$' -bench MapProbeBySize -benchtime 3000000x ./state/heap/
func BenchmarkMapProbeBySize(b *testing.B) {
	for _, n := range []int{60_000, 600_000, 6_000_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var m keyMap[elem]
			key := func(i uint64) string {
				var k [9]byte
				k[0] = 7
				binary.BigEndian.PutUint64(k[1:], i*2654435761)
				return string(k[:])
			}
			for i := range n {
				m.setString(key(uint64(i)), elem{})
			}
			probes := make([]any, 1<<20)
			for i := range probes {
				probes[i] = key(uint64(rand.IntN(n)))
			}
			b.ResetTimer()
			found := 0
			for i := range b.N {
				if _, ok := m.get(probes[i&(len(probes)-1)]); ok {
					found++
				}
			}
			if found != b.N {
				b.Fatalf("%d of %d probes found their key", found, b.N)
			}
		})
	}
}
