package main

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"
)

// The cycle visits every slot once before it comes back to the first: a
// chase that missed slots would time fewer distinct lines than the size
// says.
func TestLayCycleVisitsEverySlotOnce(t *testing.T) {
	for _, n := range []int{2, 3, 17, 1 << 12} {
		next := make([]uint32, n)
		layCycle(next, uint64(n))
		seen := make([]bool, n)
		at := uint32(0)
		for step := range n {
			if seen[at] {
				t.Fatalf("n=%d: slot %d seen again at step %d", n, at, step)
			}
			seen[at] = true
			at = next[at]
		}
		if at != 0 {
			t.Fatalf("n=%d: after %d steps at slot %d, not back at 0", n, n, at)
		}
		if got := chase(next, n); got != 0 {
			t.Fatalf("n=%d: chase of %d steps ends at %d", n, n, got)
		}
	}
}

// A chase of as many loads as the mapping has slots goes once around the
// cycle and ends where it began; one load fewer, or half as many, does
// not. So the probe chases the whole size it was given, with either
// advice.
func TestChaseOnceGoesRoundTheWholeSize(t *testing.T) {
	const n = 4 << 20
	for _, advice := range []int{syscall.MADV_NOHUGEPAGE, syscall.MADV_HUGEPAGE} {
		d, end, err := chaseOnce(n, advice, n/4)
		if errors.Is(err, syscall.EINVAL) && advice == syscall.MADV_HUGEPAGE {
			t.Skip("this kernel has no transparent huge pages")
		}
		if err != nil {
			t.Fatal(err)
		}
		if d <= 0 || end != 0 {
			t.Fatalf("advice %d: %d loads took %v and ended at slot %d, not 0", advice, n/4, d, end)
		}
		for _, loads := range []int{n/4 - 1, n / 8} {
			if _, end, _ := chaseOnce(n, advice, loads); end == 0 {
				t.Fatalf("advice %d: %d loads ended back at slot 0", advice, loads)
			}
		}
	}
}

func TestLatencyMainRefusesBadFlags(t *testing.T) {
	refusesFlags(t, latencyMain, [][]string{
		{"-mib", "0"}, {"-mib", "1,x"}, {"-mib", ""}, {"-mib", "-4"}, {"-mib", "16385"},
		{"-loads", "0"}, {"-rounds", "-1"}, {"extra", "-mib", "4"},
	})
}

func TestLatencyMainPrintsEachSize(t *testing.T) {
	var out bytes.Buffer
	if err := latencyMain([]string{"-mib", "1,4", "-loads", "10000", "-rounds", "1"}, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(strings.TrimSpace(lines[1]), "1 ") || !strings.HasPrefix(strings.TrimSpace(lines[2]), "4 ") {
		t.Fatalf("want a header and sizes 1 and 4:\n%s", out.String())
	}
}
