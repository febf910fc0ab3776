package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// touchArg is the hidden first argument of the page-touch probe: it maps
// fresh anonymous memory, writes one byte to each 4 KiB page and reports
// the minor faults and the wall and system time per fault and per byte. On a virtual machine
// the first touch of a page the host does not back is several times
// dearer than one it does, and the kernel's share of a large run (its
// fresh pages zeroed, clear_page) moves with it (README, twentieth
// session). With -huge the mapping asks for transparent huge pages
// instead of small ones; each round also reports how much memory the
// guest reported free to the host while it touched (where the kernel
// counts it: README, twenty-ninth session). With -keep each round's
// mapping stays until the last round ends, so that the rounds measure a
// process's growth GiB after GiB, as a Go heap grows: on this machine the
// first few GiB (3.5 to 9.5, varying) cost 1.3-3.0 µs a fault and those
// past them 11-15 (README, forty-first session).
const touchArg = "touch-pages"

// touchRound is one round's measure.
type touchRound struct {
	bytes  int
	faults int64
	sys    time.Duration
	wall   time.Duration
}

// sysPerByte is the system time per byte touched, in ns: comparable
// between small and huge pages, whose faults are not.
func (r touchRound) sysPerByte() float64 {
	if r.bytes == 0 {
		return 0
	}
	return float64(r.sys.Nanoseconds()) / float64(r.bytes)
}

// perFault is the wall and the system time per minor fault. On an idle
// core the two differ by the loop's own user time; on a busy one the wall
// time also holds the waits for a CPU.
func (r touchRound) perFault() (wall, sys time.Duration) {
	if r.faults == 0 {
		return 0, 0
	}
	return r.wall / time.Duration(r.faults), r.sys / time.Duration(r.faults)
}

func touchMain(args []string, out io.Writer) error {
	fs := flag.NewFlagSet(touchArg, flag.ContinueOnError)
	mib := fs.Int("mib", 1024, "MiB to map and touch per round")
	rounds := fs.Int("rounds", 2, "rounds, each a fresh mapping")
	pause := fs.Duration("pause", 0, "sleep between rounds")
	huge := fs.Bool("huge", false, "ask for transparent huge pages (MADV_HUGEPAGE) instead of small ones")
	keep := fs.Bool("keep", false, "keep each round's memory until the last round ends (a growing process), instead of unmapping it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: flags are -mib, -rounds, -pause, -huge and -keep", fs.Arg(0))
	}
	if *mib <= 0 || *rounds <= 0 {
		return fmt.Errorf("-mib and -rounds must be positive, got %d and %d", *mib, *rounds)
	}
	if *pause < 0 {
		return fmt.Errorf("-pause must not be negative, got %v", *pause)
	}
	var held [][]byte
	defer func() {
		for _, b := range held {
			_ = syscall.Munmap(b)
		}
	}()
	for i := range *rounds {
		if i > 0 {
			time.Sleep(*pause)
		}
		reported0, reporting := reportedKiB()
		r, b, err := touch(*mib<<20, *huge)
		if err != nil {
			return err
		}
		printRound(out, i, *huge, r)
		if *keep {
			fmt.Fprintf(out, "; %d MiB held from the rounds before", len(held)*(*mib))
			held = append(held, b)
		} else {
			_ = syscall.Munmap(b)
		}
		printReported(out, reported0, reporting)
	}
	return nil
}

// printRound prints round i's measure r, without ending the line.
func printRound(out io.Writer, i int, huge bool, r touchRound) {
	pages := "small pages"
	if huge {
		pages = "huge pages asked for"
	}
	wall, sys := r.perFault()
	fmt.Fprintf(out, "round %d (%s): %d MiB, %d minor faults, %.2f s wall, %.2f s sys; a fault %.2f µs wall, %.2f µs sys; %.3f ns sys per byte",
		i, pages, r.bytes>>20, r.faults, r.wall.Seconds(), r.sys.Seconds(), micros(wall), micros(sys), r.sysPerByte())
}

// printReported ends a round's line with the memory the guest reported
// free to the host since reportedKiB read reported0 (ok: reporting).
func printReported(out io.Writer, reported0 int64, reporting bool) {
	if reported1, ok := reportedKiB(); ok && reporting {
		fmt.Fprintf(out, "; %.1f MiB reported free to the host during the touch (whole guest)\n", float64(reported1-reported0)/1024)
		return
	}
	fmt.Fprintln(out, "; free page reporting not counted by this kernel")
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// touch maps n bytes, writes a byte per page and returns the mapping,
// which the caller unmaps (nil with an error). The mapping asks for small
// pages, so that a fault is one page whatever the machine's transparent
// huge page setting, or with huge for transparent huge pages (which the
// kernel gives where it can: under the setting never, none).
func touch(n int, huge bool) (touchRound, []byte, error) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return touchRound{}, nil, fmt.Errorf("mmap %d bytes: %w", n, err)
	}
	r, err := touchMapped(b, huge)
	if err != nil {
		_ = syscall.Munmap(b)
		return touchRound{}, nil, err
	}
	return r, b, nil
}

// touchMapped advises b's pages, writes a byte to each and returns the
// minor faults and the system and wall time that took.
func touchMapped(b []byte, huge bool) (touchRound, error) {
	n := len(b)
	advice, name := syscall.MADV_NOHUGEPAGE, "MADV_NOHUGEPAGE"
	if huge {
		advice, name = syscall.MADV_HUGEPAGE, "MADV_HUGEPAGE"
	}
	if err := syscall.Madvise(b, advice); err != nil {
		return touchRound{}, fmt.Errorf("madvise(%s): %w", name, err)
	}
	page := syscall.Getpagesize()
	before, err := selfUsage()
	if err != nil {
		return touchRound{}, err
	}
	start := time.Now()
	for i := 0; i < n; i += page {
		b[i] = 1
	}
	wall := time.Since(start)
	after, err := selfUsage()
	if err != nil {
		return touchRound{}, err
	}
	return touchRound{
		bytes:  n,
		faults: after.Minflt - before.Minflt,
		sys:    time.Duration(after.Stime.Nano() - before.Stime.Nano()),
		wall:   wall,
	}, nil
}

func selfUsage() (syscall.Rusage, error) {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return r, fmt.Errorf("getrusage: %w", err)
	}
	return r, nil
}

// reportedPath is where this machine's kernel build (6.18, Firecracker's)
// counts the KiB its free page reporting (the virtio balloon's) has
// reported free to the host, which may then drop their backing: the
// guest's next touch of them is the host's first again. Upstream kernels
// have no such count.
const reportedPath = "/sys/module/page_reporting/parameters/reported_kib"

// reportedKiB reads reportedPath; false where the kernel has no such
// count.
func reportedKiB() (int64, bool) {
	b, err := os.ReadFile(reportedPath)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}
