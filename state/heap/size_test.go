package heap

import (
	"fmt"
	"strings"
	"testing"

	"github.com/weirstream/weir/keygroup"
	"github.com/weirstream/weir/state"
)

// EstimatedSize of entries of one size is exact: their count times the
// bytes a snapshot writes for one (the key with its length, the value),
// whichever entries it samples; it follows deletes and is near the
// snapshot's own size.
func TestEstimatedSizeOfUniformEntries(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	if n := b.EstimatedSize(); n != 0 {
		t.Fatalf("empty backend: %d bytes, want 0", n)
	}
	v := state.Value(b, state.ValueDescriptor[string]{Name: "v"})
	value := strings.Repeat("x", 100)
	for k := range 1000 {
		at(b, fmt.Sprintf("k%03d", k))
		v.Update(value)
	}
	key := len(state.AnyCodec{}.Encode(nil, "k000"))
	perEntry := int64(1 + key + 1 + len(value)) // uvarint lengths: key, value
	if n := b.EstimatedSize(); n != 1000*perEntry {
		t.Errorf("1000 entries of %d bytes: estimated %d, want %d", perEntry, n, 1000*perEntry)
	}
	blob := int64(len(snapshotBlob(t, b, 0)))
	if est := b.EstimatedSize(); est > blob || est < blob*9/10 {
		t.Errorf("estimated %d bytes; the snapshot holds %d", est, blob)
	}
	for k := range 500 {
		at(b, fmt.Sprintf("k%03d", k))
		v.Clear()
	}
	if n := b.EstimatedSize(); n != 500*perEntry {
		t.Errorf("after deleting half: %d, want %d", n, 500*perEntry)
	}
}

// One key holding a large map or list (Nexmark q15's distinct sets: one
// key, a growing map) is estimated from a sample of its elements, not
// encoded whole at every estimate; elements of one size make the
// estimate exact.
func TestEstimatedSizeOfOneLargeEntry(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	values := &sizeCountingCodec{Codec: state.CodecFor[string]()}
	m := state.Map(b, state.MapDescriptor[string, string]{Name: "m", ValueCodec: values})
	l := state.List(b, state.ListDescriptor[string]{Name: "l", Codec: values})
	at(b, "k")
	const n = 10_000
	value := strings.Repeat("y", 50)
	for i := range n {
		m.Put(fmt.Sprintf("u%05d", i), value)
		l.Add(value)
	}
	key := int64(len(state.AnyCodec{}.Encode(nil, "k")))
	str := state.CodecFor[string]()
	uk := int64(len(str.Encode(nil, "u00000")))
	v := int64(len(str.Encode(nil, value)))
	header := uvarintLen(n)
	wantMap := 1 + key + header + n*(1+uk+1+v)
	wantList := 1 + key + header + n*(1+v)
	values.n = 0
	if got := b.EstimatedSize(); got != wantMap+wantList {
		t.Errorf("one key, a map and a list of %d: estimated %d, want %d", n, got, wantMap+wantList)
	}
	if values.n > 2*sizeSample {
		t.Errorf("the estimate encoded %d values; want at most %d (a sample of each)", values.n, 2*sizeSample)
	}
}

// sizeCountingCodec counts the values it encodes.
type sizeCountingCodec struct {
	state.Codec[string]
	n int
}

func (c *sizeCountingCodec) Encode(buf []byte, v string) []byte {
	c.n++
	return c.Codec.Encode(buf, v)
}

// A state of many small entries and a few large ones (Nexmark q16's
// COUNT DISTINCT maps: four of millions of values among thousands of a
// few) is estimated from every entry's element count, not from the
// entries a sample happens to meet: with keys and elements of one size
// each, the estimate is exact, and the same at every call.
func TestEstimatedSizeOfSkewedEntries(t *testing.T) {
	b := newSubtask(t, 1, 0, nil)
	m := state.Map(b, state.MapDescriptor[string, string]{Name: "m"})
	value := strings.Repeat("z", 20)
	const small, large, each = 3000, 2, 20_000
	var want int64
	str := state.CodecFor[string]()
	elem := int64(1 + len(str.Encode(nil, "u00000")) + 1 + len(str.Encode(nil, value)))
	key := int64(1 + len(state.AnyCodec{}.Encode(nil, "k0000")))
	for k := range small + large {
		n := 2
		if k >= small {
			n = each
		}
		at(b, fmt.Sprintf("k%04d", k))
		for i := range n {
			m.Put(fmt.Sprintf("u%05d", i), value)
		}
		want += key + uvarintLen(n) + int64(n)*elem
	}
	l := state.List(b, state.ListDescriptor[string]{Name: "l"})
	ikey := int64(1 + len(state.AnyCodec{}.Encode(nil, int64(1<<14))))
	for k := range small + 1 { // keys that are no strings, held apart (keyMap.a)
		n := 1
		if k == small {
			n = each
		}
		at(b, int64(1<<14+k)) // encodings of one length
		for range n {
			l.Add(value)
		}
		want += ikey + uvarintLen(n) + int64(n)*int64(1+len(str.Encode(nil, value)))
	}
	for range 3 {
		if got := b.estimatedSize(liveSample, liveElems); got != want {
			t.Fatalf("%d maps of 2 and %d of %d, %d lists of 1 and one of %d: estimated %d, want %d",
				small, large, each, small, each, got, want)
		}
	}
}

// A state with a TTL is estimated from its sampled entries, as before
// estimateByElements: counting its elements would price expired ones, not
// yet cleaned up, as live. Here one entry of 100,000 expired elements
// under a key that is no string sits among 1,000 live entries of two (a
// review found the count estimated 42 times the snapshot).
func TestEstimatedSizeOfExpiredLargeEntry(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	l := state.List(b, state.ListDescriptor[string]{Name: "l", TTL: ttlOf(10, state.OnCreateAndWrite)})
	value := strings.Repeat("v", 20)
	at(b, int64(1<<20))
	for range 100_000 {
		l.Add(value)
	}
	clock.ms = 1000 // all expired, none cleaned up
	for k := range 1000 {
		at(b, fmt.Sprintf("k%04d", k))
		l.AddAll([]string{value, value})
	}
	blob := int64(len(snapshotBlob(t, b, clock.ms)))
	for range 5 {
		if est := b.estimatedSize(liveSample, liveElems); est < blob/2 || est > 2*blob {
			t.Fatalf("estimated %d bytes; the snapshot holds %d", est, blob)
		}
	}
}

// A state whose keys are strings and other kinds, held apart (keyMap.w,
// keyMap.f or keyMap.s, and keyMap.a), is sampled from both in proportion: a review found the
// strings sampled first and the others never met (72 KB estimated
// against a snapshot of 3.1 MB), when the entries of one kind are large.
// With 9 strings to 1 other key, a share rounded down would never sample
// the others, one rounded up would sample them half the time (there the
// others' entries are smaller, so that the sample's spread, about 18 % of
// their share, stays well inside the bounds).
func TestEstimatedSizeOfMixedKeyKinds(t *testing.T) {
	for _, c := range []struct{ strs, others, large int }{{2000, 2000, 1000}, {3600, 400, 100}} {
		b := newSubtask(t, 1, 0, nil)
		v := state.Value(b, state.ValueDescriptor[string]{Name: "v"})
		small, large := strings.Repeat("s", 10), strings.Repeat("L", c.large)
		for k := range c.strs {
			at(b, fmt.Sprintf("k%04d", k))
			v.Update(small)
		}
		for k := range c.others {
			at(b, int64(k))
			v.Update(large)
		}
		blob := int64(len(snapshotBlob(t, b, 0)))
		for range 5 {
			if est := b.estimatedSize(liveSample, liveElems); est < blob*2/3 || est > blob*3/2 {
				t.Fatalf("%d string keys of 10 bytes and %d int64 keys of %d: estimated %d bytes; the snapshot holds %d",
					c.strs, c.others, c.large, est, blob)
			}
		}
	}
}

// Under a max parallelism of 32768 a state of a few keys is sampled from
// the groups that hold them: visiting every 1024th group (EstimatedSize's
// sample of 32; every 128th for a checkpoint's 256) read it as empty.
func TestEstimatedSizeUnderLargeMaxParallelism(t *testing.T) {
	const groups = 32768
	b, err := New(Options{KeyGroupRange: keygroup.RangeFor(groups, 1, 0), MaxParallelism: groups})
	if err != nil {
		t.Fatal(err)
	}
	v := state.Value(b, state.ValueDescriptor[string]{Name: "v"})
	value := strings.Repeat("x", 100)
	for k := range 10 {
		key := fmt.Sprintf("k%03d", k)
		b.SetCurrentKey(key, keygroup.ForKey(key, groups))
		v.Update(value)
	}
	perEntry := int64(1 + len(state.AnyCodec{}.Encode(nil, "k000")) + 1 + len(value))
	for range 5 {
		if got := b.EstimatedSize(); got != 10*perEntry {
			t.Fatalf("10 entries of %d bytes in %d key groups: estimated %d, want %d", perEntry, groups, got, 10*perEntry)
		}
	}
}

// A list with a TTL expires from its oldest elements; its estimate
// samples elements over the whole list, not its first few: a review
// found a list whose oldest elements had expired estimated at 0 bytes
// against a snapshot of 2.4 MB.
func TestEstimatedSizeOfHalfExpiredList(t *testing.T) {
	clock := &fakeClock{}
	b := newSubtask(t, 1, 0, clock)
	l := state.List(b, state.ListDescriptor[string]{Name: "l", TTL: ttlOf(10, state.OnCreateAndWrite)})
	value := strings.Repeat("v", 50)
	at(b, "k")
	for i := range 10_000 {
		if i == 5000 {
			clock.ms = 8
		}
		l.Add(value)
	}
	clock.ms = 12 // the first 5000 expired, none cleaned up
	blob := int64(len(snapshotBlob(t, b, clock.ms)))
	if est := b.estimatedSize(liveSample, liveElems); est < blob*9/10 || est > blob*11/10 {
		t.Fatalf("a list of 5000 expired and 5000 live elements: estimated %d bytes; the snapshot holds %d", est, blob)
	}
}

// A list's sample takes one element at random from each share, not one at
// a fixed place: a review found a list alternating small and large
// elements estimated at 6 KB against a snapshot of 807 KB, its sample
// meeting the small ones only. Averaged over many estimates, the
// estimate is the snapshot's size.
func TestEstimatedSizeOfAlternatingList(t *testing.T) {
	b := newSubtask(t, 1, 0, &fakeClock{})
	l := state.List(b, state.ListDescriptor[string]{Name: "l", TTL: ttlOf(1_000_000, state.OnCreateAndWrite)})
	at(b, "k")
	small, large := "s", strings.Repeat("L", 1000)
	for i := range 1600 {
		if i%2 == 0 {
			l.Add(small)
		} else {
			l.Add(large)
		}
	}
	blob := float64(len(snapshotBlob(t, b, 0)))
	const runs = 200
	var sum float64
	for range runs {
		sum += float64(b.estimatedSize(liveSample, liveElems))
	}
	if mean := sum / runs; mean < 0.9*blob || mean > 1.1*blob {
		t.Fatalf("a list alternating elements of 1 and 1000 bytes: estimated %.0f bytes on average; the snapshot holds %.0f", mean, blob)
	}
}
