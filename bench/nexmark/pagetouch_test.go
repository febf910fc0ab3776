package main

import (
	"bytes"
	"io"
	"strings"
	"syscall"
	"testing"
	"time"
)

// touchOnce is a round of touch whose mapping is unmapped at once.
func touchOnce(n int, huge bool) (touchRound, error) {
	r, b, err := touch(n, huge)
	if b != nil {
		_ = syscall.Munmap(b)
	}
	return r, err
}

// A fresh mapping faults once per page it touches: the probe's count is the
// kernel's, so a round of n pages reports at least n faults, and the
// kernel's time for them is system time, within the round's wall time.
func TestTouchOnceCountsAFaultPerPage(t *testing.T) {
	const n = 64 << 20
	r, err := touchOnce(n, false)
	if err != nil {
		t.Fatal(err)
	}
	pages := int64(n / syscall.Getpagesize())
	if r.faults < pages {
		t.Fatalf("%d faults for %d fresh pages", r.faults, pages)
	}
	if r.sys <= 0 || r.sys > r.wall+50*time.Millisecond {
		t.Fatalf("sys %v for a round of %v wall", r.sys, r.wall)
	}
	wall, sys := r.perFault()
	if wall <= 0 || sys <= 0 || wall != r.wall/time.Duration(r.faults) || sys != r.sys/time.Duration(r.faults) {
		t.Fatalf("per fault %v wall, %v sys, of %+v", wall, sys, r)
	}
}

// Asked for huge pages, a round faults at most once per small page (the
// kernel may give none: its setting never, or no free 2 MiB block) and at
// least once per huge one; its system time per byte is the round's.
func TestTouchOnceHugeFaultsPerHugePageAtLeast(t *testing.T) {
	const n, hugePage = 64 << 20, 2 << 20
	r, err := touchOnce(n, true)
	if err != nil {
		t.Fatal(err)
	}
	if small := int64(n / syscall.Getpagesize()); r.faults < n/hugePage || r.faults > small+64 {
		t.Fatalf("%d faults for %d bytes: fewer than one per huge page or more than one per small page", r.faults, n)
	}
	if r.bytes != n || r.sysPerByte() != float64(r.sys.Nanoseconds())/n {
		t.Fatalf("%.4f ns per byte of %+v", r.sysPerByte(), r)
	}
}

func TestTouchMainRefusesBadFlags(t *testing.T) {
	refusesFlags(t, touchMain, [][]string{
		{"-mib", "0"}, {"-mib", "-1"}, {"-rounds", "0"}, {"-rounds", "-1"},
		{"-pause", "-1s"}, {"extra", "-mib", "4"},
	})
}

// refusesFlags checks that main refuses each of cases with an error that
// names its first argument (the flag, or the stray argument), having
// printed nothing.
func refusesFlags(t *testing.T, main func([]string, io.Writer) error, cases [][]string) {
	t.Helper()
	for _, args := range cases {
		var out bytes.Buffer
		err := main(args, &out)
		if err == nil {
			t.Errorf("%q: no error, printed %q", args, out.String())
			continue
		}
		if want := strings.TrimLeft(args[0], "-"); !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %q does not name %q", args, err, want)
		}
		if out.Len() != 0 {
			t.Errorf("%q: printed %q before refusing", args, out.String())
		}
	}
}

func TestTouchMainPrintsEachRound(t *testing.T) {
	var out bytes.Buffer
	if err := touchMain([]string{"-mib", "4", "-rounds", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "MiB, "); got != 2 {
		t.Fatalf("%d rounds printed:\n%s", got, out.String())
	}
}

// With -keep each round says how much the rounds before it still hold:
// the memory a growing process has already touched.
func TestTouchMainKeepHoldsTheRoundsBefore(t *testing.T) {
	var out bytes.Buffer
	if err := touchMain([]string{"-mib", "4", "-rounds", "3", "-keep"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	for i, held := range []string{"0 MiB held", "4 MiB held", "8 MiB held"} {
		if len(lines) != 3 || !strings.Contains(lines[i], held) {
			t.Fatalf("round %d does not say %q:\n%s", i, held, out.String())
		}
	}
	out.Reset()
	if err := touchMain([]string{"-mib", "4", "-rounds", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "held") {
		t.Fatalf("rounds without -keep say what they hold:\n%s", out.String())
	}
}
