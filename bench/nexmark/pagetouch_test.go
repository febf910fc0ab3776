package main

import (
	"bytes"
	"strings"
	"syscall"
	"testing"
)

// A fresh mapping faults once per page it touches: the probe's count is the
// kernel's, so a round of n pages reports at least n faults.
func TestTouchOnceCountsAFaultPerPage(t *testing.T) {
	const n = 16 << 20
	r, err := touchOnce(n)
	if err != nil {
		t.Fatal(err)
	}
	pages := int64(n / syscall.Getpagesize())
	if r.faults < pages {
		t.Fatalf("%d faults for %d fresh pages", r.faults, pages)
	}
	if r.perFault() <= 0 {
		t.Fatalf("per fault %v", r.perFault())
	}
}

func TestTouchMainRejectsNonPositiveSizes(t *testing.T) {
	var out bytes.Buffer
	err := touchMain([]string{"-mib", "0"}, &out)
	if err == nil || !strings.Contains(err.Error(), "-mib") {
		t.Fatalf("err = %v", err)
	}
	if err := touchMain([]string{"-mib", "4", "-rounds", "2"}, &out); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "round "); got != 2 {
		t.Fatalf("%d rounds printed:\n%s", got, out.String())
	}
}
