package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// latencyArg is the hidden first argument of the memory-latency probe: for
// each size it maps fresh anonymous memory, lays one random cycle through
// it (each 4-byte slot holds the index of the next) and follows the cycle,
// each load waiting for the one before, as a lookup in a map of millions
// of keys waits for its miss. It reports nanoseconds per load with small
// pages and with transparent huge pages asked for (MADV_HUGEPAGE), so that
// the share of address translation shows. Issue 16's third goal compares
// runs whose state fits the caches (1 M events) with runs whose state does
// not (10 M); what a miss costs is the machine's, and it sets how far
// apart the two can be.
const latencyArg = "mem-latency"

// latencyPages are the two ways the probe maps memory.
var latencyPages = []struct {
	name   string
	advice int
}{
	{"small", syscall.MADV_NOHUGEPAGE},
	{"huge", syscall.MADV_HUGEPAGE},
}

func latencyMain(args []string, out io.Writer) error {
	fs := flag.NewFlagSet(latencyArg, flag.ContinueOnError)
	sizes := fs.String("mib", "1,16,64,256,1024", "sizes to probe, MiB, comma-separated")
	loads := fs.Int("loads", 4_000_000, "dependent loads timed per size and page size")
	rounds := fs.Int("rounds", 3, "rounds; the median is reported (of an even number, the upper middle)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: flags are -mib, -loads and -rounds", fs.Arg(0))
	}
	mibs, err := parseMiBs(*sizes)
	if err != nil {
		return err
	}
	if *loads <= 0 || *rounds <= 0 {
		return fmt.Errorf("-loads and -rounds must be positive, got %d and %d", *loads, *rounds)
	}
	fmt.Fprintf(out, "%8s", "MiB")
	for _, pages := range latencyPages {
		fmt.Fprintf(out, " %14s", pages.name+" ns/load")
	}
	fmt.Fprintln(out)
	for _, mib := range mibs {
		fmt.Fprintf(out, "%8d", mib)
		for _, pages := range latencyPages {
			ns, err := medianChase(mib<<20, pages.advice, *loads, *rounds)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, " %14.1f", ns)
		}
		fmt.Fprintln(out)
	}
	return nil
}

// medianChase is the median over rounds of chaseOnce's nanoseconds per
// load (of an even number of rounds, the upper middle).
func medianChase(n, advice, loads, rounds int) (float64, error) {
	runs := make([]float64, 0, rounds)
	for range rounds {
		d, _, err := chaseOnce(n, advice, loads)
		if err != nil {
			return 0, err
		}
		runs = append(runs, float64(d.Nanoseconds())/float64(loads))
	}
	slices.Sort(runs)
	return runs[len(runs)/2], nil
}

// maxLatencyMiB is the largest size the probe takes: its slots hold
// 32-bit indices, 4 bytes each.
const maxLatencyMiB = (1 << 32) * 4 >> 20

// parseMiBs reads -mib's list of positive sizes.
func parseMiBs(s string) ([]int, error) {
	var mibs []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || n > maxLatencyMiB {
			return nil, fmt.Errorf("-mib: %q is not a size in MiB from 1 to %d", f, maxLatencyMiB)
		}
		mibs = append(mibs, n)
	}
	return mibs, nil
}

// chaseOnce maps n bytes (with madvise advice), lays a random cycle
// through them and times loads steps along it from slot 0; it returns the
// slot where they end.
func chaseOnce(n, advice, loads int) (time.Duration, uint32, error) {
	const huge = 2 << 20 // a huge page's size and alignment on x86-64
	m, err := syscall.Mmap(-1, 0, n+huge, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return 0, 0, fmt.Errorf("mmap %d bytes: %w", n+huge, err)
	}
	defer syscall.Munmap(m)
	off := int(-uintptr(unsafe.Pointer(&m[0])) & (huge - 1))
	b := m[off : off+n]
	if err := syscall.Madvise(b, advice); err != nil {
		return 0, 0, fmt.Errorf("madvise(%d): %w", advice, err)
	}
	next := unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), n/4)
	layCycle(next, 0x9e3779b97f4a7c15)
	start := time.Now()
	at := chase(next, loads)
	return time.Since(start), at, nil
}

// chase follows next from slot 0 for loads steps and returns where it
// ends.
func chase(next []uint32, loads int) uint32 {
	at := uint32(0)
	for range loads {
		at = next[at]
	}
	return at
}

// layCycle makes next one cycle through all its slots in a random order
// (Sattolo's shuffle, from seed): following it from any slot visits every
// slot before coming back.
func layCycle(next []uint32, seed uint64) {
	for i := range next {
		next[i] = uint32(i)
	}
	x := seed | 1
	for i := len(next) - 1; i > 0; i-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		j := int(x % uint64(i))
		next[i], next[j] = next[j], next[i]
	}
}
