package heap

import "github.com/weirstream/weir/state"

// Prefetch looks up each key's entry, then each user key in it (see
// state.Prefetcher): the user keys' short keys in one loop, their lookups
// back to back in another. A key built right before its lookup (short)
// is read by the map's hash from stores that cannot forward to it, and
// the wait for them serialises the lookups (BenchmarkMapProbeOrder). A
// run of lookups under one key looks the key up once; a user key longer
// than a short key is skipped.
func (t *mapTable) Prefetch(as []state.Ahead) {
	r := t.b.opts.KeyGroupRange
	ms, sks := t.ahead.maps[:0], t.ahead.keys[:0]
	var last *ukMap // the entry's map of the last lookup's key
	for j, a := range as {
		if j == 0 || a.Key != as[j-1].Key || a.KeyGroup != as[j-1].KeyGroup {
			last = nil
			if r.Contains(a.KeyGroup) {
				if e, ok := t.data.maps[a.KeyGroup-r.Start].getString(a.Key); ok {
					last = e.m
				}
			}
		}
		if sk, ok := short(a.UK); ok && last != nil {
			ms, sks = append(ms, last), append(sks, sk)
		}
	}
	var n uint64
	for j, m := range ms {
		n += oneIf(m.hasShort(&sks[j]))
	}
	clear(ms)
	t.ahead.maps, t.ahead.keys, t.ahead.found = ms[:0], sks[:0], n
}

// oneIf is 1 if ok, else 0, without a branch.
func oneIf(ok bool) uint64 {
	if ok {
		return 1
	}
	return 0
}
