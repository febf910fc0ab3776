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
			for i := range n {
				m.setString(probeKey(uint64(i)), elem{})
			}
			probes := make([]any, 1<<20)
			for i := range probes {
				probes[i] = probeKey(uint64(rand.IntN(n)))
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

// BenchmarkMapProbeOrder probes a keyMap of 3 M short string keys at
// random, each probe's key a string as state reads take it:
//   - serial: each probe's key depends on the last one's result, as the
//     reads of one row after another do;
//   - batch: back to back through getString, which builds the short key
//     (short) right before the map hashes it;
//   - batch-short, batch-short-mixed: back to back on short keys built
//     beforehand (every key present; half absent);
//   - batch-shortconv: short, then the map, inline;
//   - batch-mixed: batch with half the keys absent.
//
// Back to back, the CPU overlaps the misses of independent probes
// (batch-short: about a quarter of serial's time per probe, absent keys
// or not) — unless each key is built just before its probe: the hash
// reads it with loads its stores cannot forward to, which wait for the
// stores to retire, behind the previous probe's miss (batch,
// batch-shortconv: as slow as serial). Why mapTable.Prefetch builds its
// short keys in one loop and probes in another. Run with
// go test -run '^$' -bench MapProbeOrder -benchtime 10000000x ./state/heap/
func BenchmarkMapProbeOrder(b *testing.B) {
	const n = 3_000_000
	var m keyMap[elem]
	for i := range n {
		m.setString(probeKey(uint64(i)), elem{ver: 1})
	}
	probes := func(absent int) []string {
		p := make([]string, 1<<22)
		for i := range p {
			j := uint64(rand.IntN(n))
			if rand.IntN(100) < absent {
				j += n
			}
			p[i] = probeKey(j)
		}
		return p
	}
	present, mixed := probes(0), probes(50)
	mask := len(present) - 1
	b.Run("serial", serialProbes(m, present))
	b.Run("batch", batchProbes(m, present))
	prebuilt := func(keys []string) func(b *testing.B) {
		return func(b *testing.B) {
			sks := make([]shortKey, len(keys))
			for i, k := range keys {
				sks[i], _ = short(k)
			}
			b.ResetTimer()
			var sum uint64
			for i := range b.N {
				sum += m.f[sks[i&mask]].ver
			}
		}
	}
	b.Run("batch-short", prebuilt(present))
	b.Run("batch-short-mixed", prebuilt(mixed))
	b.Run("batch-shortconv", func(b *testing.B) {
		var sum uint64
		for i := range b.N {
			sk, _ := short(present[i&mask])
			sum += m.f[sk].ver
		}
	})
	b.Run("batch-mixed", func(b *testing.B) {
		var sum uint64
		for i := range b.N {
			e, _ := m.getString(mixed[i&mask])
			sum += e.ver
		}
		if b.N >= 1000 && (sum == 0 || sum == uint64(b.N)) {
			b.Fatalf("%d of %d probes found their key; want about half", sum, b.N)
		}
	})
}

// probeKey is the i-th key of the probe benchmarks: 9 bytes, a tag and a
// BIGINT, as SQL's.
func probeKey(i uint64) string {
	var k [9]byte
	k[0] = 7
	binary.BigEndian.PutUint64(k[1:], i*2654435761)
	return string(k[:])
}

// BenchmarkMapProbeWordKeys probes and writes a keyMap through getString
// and setString with keys of up to 5 bytes, SQL's key of one BIGINT (a
// tag and a varint: Nexmark's auction, bidder and price keys), at
// three sizes: those keys are word keys (keyMap.w), held in a wordMap
// since the thirty-ninth session (a Go map of 64-bit keys before: the
// 2.4-2.8 times as many probes as short keys' that keymap.go quotes were
// measured so), whose probe hashes a register rather than stored bytes
// (see BenchmarkMapProbeOrder). serial probes one after another, each waiting
// for the last; batch and set back to back. Run with
// go test -run '^$' -bench MapProbeWordKeys -benchtime 3000000x ./state/heap/
func BenchmarkMapProbeWordKeys(b *testing.B) {
	for _, n := range []int{60_000, 600_000, 6_000_000} {
		var m keyMap[elem]
		for i := range n {
			m.setString(wordProbeKey(uint64(i)), elem{ver: 1})
		}
		keys := make([]string, 1<<22)
		for i := range keys {
			keys[i] = wordProbeKey(uint64(rand.IntN(n)))
		}
		mask := len(keys) - 1
		b.Run(fmt.Sprint("serial-", n), serialProbes(m, keys))
		b.Run(fmt.Sprint("batch-", n), batchProbes(m, keys))
		b.Run(fmt.Sprint("set-", n), func(b *testing.B) {
			for i := range b.N {
				m.setString(keys[i&mask], elem{ver: 1})
			}
		})
	}
}

// wordProbeKey is the i-th key of BenchmarkMapProbeWordKeys: a tag and
// i as a varint, as SQL encodes a BIGINT key.
func wordProbeKey(i uint64) string {
	return string(binary.AppendVarint([]byte{7}, int64(i)))
}

// serialProbes probes m for keys (every one present, its ver 1, a power
// of two of them) one after another, each probe's index waiting for the
// last one's entry.
func serialProbes(m keyMap[elem], keys []string) func(*testing.B) {
	return func(b *testing.B) {
		mask := len(keys) - 1
		var last uint64
		for i := range b.N {
			e, _ := m.getString(keys[(i+int(last>>32))&mask]) // ver is 1: the index is i's, but waits for e
			last = e.ver
		}
	}
}

// batchProbes probes m for keys (as serialProbes) back to back.
func batchProbes(m keyMap[elem], keys []string) func(*testing.B) {
	return func(b *testing.B) {
		mask := len(keys) - 1
		var sum uint64
		for i := range b.N {
			e, _ := m.getString(keys[i&mask])
			sum += e.ver
		}
		if sum != uint64(b.N) {
			b.Fatalf("%d of %d probes found their key", sum, b.N)
		}
	}
}

// BenchmarkWordMapProbe probes the user-key maps of many keys, as Nexmark
// q16's DISTINCT sets are (at 10 M events some 20,000 maps, four of them
// of a million values and more), back to back at random: ukMaps whose
// word user keys are in a wordMap, against the same user keys in a Go
// map (map[wordKey]elem, what ukMap held them in before). maps × keys
// per map: 20,000 × 50 as at 1 M events, 20,000 × 500 as at 10 M, and 8
// maps of 500,000. found probes keys held; absent ones not held (most
// of q16's first probes of a value). Run with
// go test -run '^$' -bench WordMapProbe -benchtime 3000000x ./state/heap/
func BenchmarkWordMapProbe(b *testing.B) {
	for _, size := range [][2]int{{20_000, 50}, {20_000, 500}, {8, 500_000}} {
		maps, per := size[0], size[1]
		type probe struct {
			m  int
			uk string
		}
		word, goMap := make([]*ukMap, maps), make([]*map[wordKey]elem, maps)
		var found, absent []probe
		for i := range maps {
			word[i] = &ukMap{}
			gm := map[wordKey]elem{}
			goMap[i] = &gm
		}
		for j := range per { // the maps grow together, as a stream's do
			for i := range maps {
				uk := wordProbeKey(uint64(j*maps + i))
				word[i].setString(uk, elem{ver: 1})
				k, _ := wordOf(uk)
				(*goMap[i])[k] = elem{ver: 1}
				found = append(found, probe{i, uk})
				absent = append(absent, probe{i, wordProbeKey(uint64((per+j)*maps + i))})
			}
		}
		for _, ps := range [][]probe{found, absent} {
			rand.Shuffle(len(ps), func(i, j int) { ps[i], ps[j] = ps[j], ps[i] })
			var buf []byte // the user keys in probe order, as a batch's are: not a miss each
			for _, p := range ps {
				buf = append(buf, p.uk...)
			}
			at := 0
			for j := range ps {
				ps[j].uk, at = string(buf[at:at+len(ps[j].uk)]), at+len(ps[j].uk)
			}
		}
		for _, c := range []struct {
			name string
			ps   []probe
			want uint64
		}{{"found", found, 1}, {"absent", absent, 0}} {
			name := fmt.Sprintf("%dx%d-%s", maps, per, c.name)
			b.Run(name+"-wordMap", func(b *testing.B) {
				var sum uint64
				for i := range b.N {
					p := c.ps[i%len(c.ps)]
					e, _ := word[p.m].getString(p.uk)
					sum += e.ver
				}
				if sum != c.want*uint64(b.N) {
					b.Fatalf("%d of %d probes found their key", sum, b.N)
				}
			})
			b.Run(name+"-goMap", func(b *testing.B) {
				var sum uint64
				for i := range b.N {
					p := c.ps[i%len(c.ps)]
					k, _ := wordOf(p.uk)
					sum += (*goMap[p.m])[k].ver
				}
				if sum != c.want*uint64(b.N) {
					b.Fatalf("%d of %d probes found their key", sum, b.N)
				}
			})
		}
	}
}

// wordOf is word, for the benchmark's Go maps.
func wordOf(s string) (wordKey, bool) { return word(s) }
