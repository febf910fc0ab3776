package heap

import "github.com/weirstream/weir/state"

// Prefetch looks up each key's entry, then where each user key's lookup
// in it will go (see state.Prefetcher). A user key held as a word
// (wordKey: e.g. COUNT DISTINCT's values of a BIGINT) in a map with a
// table has its home slot read (wordMap.first): no read depends on an
// earlier one's, and no branch on what a read loads, so the CPU waits for
// many such misses at once. A whole probe per user key, whose loop
// branches on each slot it reads, waited for each miss in turn: in Nexmark
// q15 at 10 M events the pass's probes took about 78 ns each, as long as
// the lookups that followed them took without it (bench/nexmark/README,
// fortieth session). Other short user keys are looked up in full, made in
// one loop and looked up in another: a key built right before its lookup
// (short) is read by the map's hash from stores that cannot forward to
// it, and the wait for them serialises the lookups
// (BenchmarkMapProbeOrder). A run of lookups under one key looks the key
// up once; a user key longer than a short key is skipped.
func (t *mapTable) Prefetch(as []state.Ahead) {
	r := t.b.opts.KeyGroupRange
	a := &t.ahead
	ms, sks, wms, wks := a.maps[:0], a.keys[:0], a.wmaps[:0], a.words[:0]
	var last *ukMap // the entry's map of the last lookup's key
	for j, ah := range as {
		if j == 0 || ah.Key != as[j-1].Key || ah.KeyGroup != as[j-1].KeyGroup {
			last = nil
			if r.Contains(ah.KeyGroup) {
				if e, ok := t.data.maps[ah.KeyGroup-r.Start].getString(ah.Key); ok {
					last = e.m
				}
			}
		}
		if last == nil {
			continue
		}
		if wk, ok := word(ah.UK); ok {
			if len(last.w.slots) > 0 { // else held inline, or none
				wms, wks = append(wms, &last.w), append(wks, wk)
			}
		} else if sk, ok := short(ah.UK); ok {
			ms, sks = append(ms, last), append(sks, sk)
		}
	}
	var sum wordKey
	for j, m := range wms {
		sum += m.first(wks[j])
	}
	var n uint64
	for j, m := range ms {
		n += oneIf(m.hasShort(&sks[j]))
	}
	clear(ms)
	clear(wms)
	a.maps, a.keys, a.wmaps, a.words = ms[:0], sks[:0], wms[:0], wks[:0]
	a.found, a.read, a.sum = n, len(wks), sum
}

// oneIf is 1 if ok, else 0, without a branch.
func oneIf(ok bool) uint64 {
	if ok {
		return 1
	}
	return 0
}
