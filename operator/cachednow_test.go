package operator

import "testing"

// TestCachedNow: one reading serves CachedNowReads calls, then the clock
// is read again; Drop makes the next call read it at once.
func TestCachedNow(t *testing.T) {
	var reads int64
	c := NewCachedNow(func() int64 { reads++; return reads * 1000 })
	var got []int64
	for range CachedNowReads + 1 {
		got = append(got, c.Now())
	}
	for i, v := range got {
		want := int64(1000)
		if i == CachedNowReads {
			want = 2000
		}
		if v != want {
			t.Fatalf("call %d: %d, want %d (readings %v)", i, v, want, got)
		}
	}
	c.Drop()
	if v := c.Now(); v != 3000 {
		t.Errorf("after Drop: %d, want a new reading, 3000", v)
	}
	if v := c.Now(); v != 3000 {
		t.Errorf("the call after: %d, want the same reading, 3000", v)
	}
}
