package heap

import (
	"bufio"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"unsafe"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
	"github.com/weirstream/weir/state/internal/wire"
)

// Incremental checkpoints (Options.Incremental; Flink's changelog state
// backend, FLIP-158, does this job for its heap backend).
//
// A full snapshot of a large heap state at every checkpoint re-encodes
// every entry each time: at 1 s checkpoints, Nexmark q9 at 3 M events
// spent half its CPU encoding snapshots and paging in their blobs (issue
// 16). An incremental checkpoint writes a shared file holding only what
// changed since the checkpoint before it — a delta — and names a chain of
// shared files: the last full snapshot (the base, in the canonical blob
// format) and the deltas after it, in order. A restore loads the base and
// applies the deltas.
//
// What changed: every write of a key (put or delete, in any state) adds
// the key to its group's dirty set (groups.touch); a snapshot takes the
// sets and starts new ones. A delta holds, for each key of the sets, the
// key's whole payload as the snapshot captured it (the map references
// copy-on-write keeps unchanged), or a delete when the key has no live
// entry.
//
// Which checkpoint a delta follows: the chain records the newest
// checkpoint this backend wrote its files for successfully (its capture
// version), and the dirty sets of every capture since. A delta covers the
// union of those sets, so a checkpoint whose write failed, or a savepoint
// (written full, never part of a chain), leaves nothing out: its changes
// go into the next delta. The shared files of a failed checkpoint that a
// later one names stay, as Pebble's do: checkpoint storage deletes only the
// shared files retired checkpoints named and no retained one does.
//
// When the deltas of the chain add up to more than its base and the chain
// to more than twice the live state (or there are maxDeltas deltas), the
// next checkpoint writes a new base, so that a restore reads at most about
// twice the state. The live state is estimated at the capture
// (capture.live). A state that only grows by new keys and appends (a
// join's list state) leaves nothing dead in its deltas, and is not
// rewritten whole each time it doubles: with the deltas alone against the
// base, Nexmark q20's 10 M events wrote 3.8 GB of checkpoints for a
// state of 1.9 GB, q9's 4.0 GB for 1.1 GB. A state that overwrites or clears (aggregates, windows) fills the
// chain with dead entries and gets its bases as before. The first
// checkpoint after a restore, or into another storage, writes a base too.
//
// Manifest (the part's state file): "WHI1" then JSON: maxParallelism and
// the files, base first. Delta file format (integers uvarint):
//
//	"WHD1" maxParallelism nStates
//	state:  name(len+bytes) kind(byte) flags(byte) nGroups group*
//	group:  keyGroup nEntries (key(len+bytes) op)*
//	op:     0 payload(len+bytes)  (the key's entry, as a blob holds it)
//	      | 1                     (the key has none)
//	      | 2 n payload(len+bytes) (a list without TTL: the elements
//	                               appended to its first n, as a list
//	                               payload of those only)
//	      | 3 changes(len+bytes)  (a map without TTL: n, then n times a
//	                               user key(len+bytes) and 1 value
//	                               (len+bytes), or 0: removed)
//
// A list only appended to (ListState.Add) since the chain's last file
// gets op 2: a hot key of a join's list state gains a few rows a second,
// and writing its whole list each time was most of a delta's bytes. A map
// whose writes since were puts and removes of user keys (MapState.Put,
// Remove; groups.touchUK, which records each one's last change in a
// ukRecord) gets op 3 with those user keys alone: Nexmark
// q15's one group keeps COUNT DISTINCT maps of millions of entries, of
// which a second changes a fraction, and rewriting them whole every
// checkpoint made its throughput fall as they grew. A restore applies op
// 3 to the map's payload (changeMap); a key created or deleted in the
// interval, or written otherwise, is written whole.
const (
	manifestMagic = keyed.HeapIncrementalMagic
	deltaMagic    = "WHD1"
	// maxDeltas bounds a chain's deltas, and so the files a restore reads.
	maxDeltas = 100
	// liveSample and liveElems bound the estimate of the live state at a
	// checkpoint's capture (capture.live), which the task waits for: about
	// liveSample entries of each state encoded, up to liveElems elements of
	// each (a list's, a map's).
	liveSample = 256
	liveElems  = 8
)

// chain is what checkpoint storage holds of the backend's state, for the
// next incremental checkpoints. Snapshots write on other goroutines, in
// any order, so it has a lock.
type chain struct {
	// group is this backend's directory under shared/: random, so that
	// backends of other subtasks and attempts never name the same file.
	group string
	mu    sync.Mutex
	// loc is the storage the links' files are in.
	loc string
	// links are the chains of the newest snapshots written, by capture
	// version, oldest first (at most maxLinks).
	links []link
	// pend holds the changed keys of every capture after the oldest
	// link's, oldest first.
	pend []capture
	// epoch counts resets; a snapshot captured before one is written as
	// a base that no later snapshot extends.
	epoch int
	// needBase: a delta capture found no chain to extend when written;
	// the next capture takes every entry.
	needBase bool
	// pruned: pend no longer holds the captures at or below it (written
	// drops them), so no delta can extend a link older than it.
	pruned uint64
}

// link is what storage holds of the state at one capture version: the
// files of its chain, the base first.
type link struct {
	version   uint64
	files     []state.FileHandle
	baseSize  int64
	deltaSize int64
	// live is the estimated size of the state at the capture (capture.live).
	live int64
}

// maxLinks is how many written chains the backend remembers: a snapshot
// written late, after newer ones, extends the newest chain older than
// itself, if one is still remembered.
const maxLinks = 4

// capture is the keys one snapshot found changed: per state, per group,
// each with how (changes: wholly, or only appended to from a length), and
// the maps changed in some user keys only, with those (groups.uks).
type capture struct {
	version uint64
	// live estimates the encoded size of the state at a checkpoint's
	// capture (Backend.estimatedSize); 0 for a savepoint's.
	live    int64
	changed map[string][]changes
	uks     map[string][]userKeys
}

func newChain() *chain {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &chain{group: "heap-" + hex.EncodeToString(b[:])}
}

// captured records the keys changed up to capture version v and returns
// the epoch v belongs to. For a checkpoint (forCheckpoint) that will
// extend a chain it returns delta true and the keys its capture must hold:
// those changed since the newest chain written (a delta extends it or a
// newer one, whose keys are fewer). It does so when the newest chain
// remembered is of the current epoch and will not be followed by a base
// (see plan), and no delta capture was refused since the last full
// capture for a checkpoint (needBase).
func (c *chain) captured(cp capture, forCheckpoint bool) (epoch int, d deltaKeys, delta bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pend = append(c.pend, cp)
	n := len(c.links)
	if !forCheckpoint || c.needBase || n == 0 || c.links[n-1].wantsBase() {
		c.needBase = c.needBase && !forCheckpoint // a savepoint's full capture writes no chain
		return c.epoch, deltaKeys{}, false
	}
	var since []map[string][]changes
	var cps []capture
	for _, cp := range c.pend {
		if cp.version > c.links[n-1].version {
			since, cps = append(since, cp.changed), append(cps, cp)
		}
	}
	return c.epoch, deltaKeys{keys: union(since), uks: userKeyChanges(cps), alone: len(cps) == 1, since: c.links[n-1].version}, true
}

// deltaKeys is what a delta capture holds: the keys changed since the
// newest chain written, and among them the maps changed in some user keys
// only, with those (a delta written later extends that chain or a newer
// one, and needs a subset of both); alone: those are the changes of this
// capture alone.
type deltaKeys struct {
	keys  map[string][]changes
	uks   map[string][]userKeys
	alone bool
	// since is the version of that chain: the capture can extend no older
	// one (plan).
	since uint64
}

// wantsBase reports whether the snapshot after l writes a base: its
// deltas add up to more than its base and its files to more than twice
// the live state, or its deltas are too many. It depends on l alone (see
// plan).
func (l link) wantsBase() bool {
	return l.deltaSize > l.baseSize && l.baseSize+l.deltaSize > 2*l.live || len(l.files) > maxDeltas
}

// plan is what a snapshot writes: a base (full), or a delta over changed
// after the files of the link it extends.
type plan struct {
	epoch int
	full  bool
	from  link
	// changes are the captures after from's, up to the snapshot's.
	changes []capture
}

// plan returns what the snapshot at capture version v, of epoch epoch,
// writes into storage loc; delta says it captured only changed keys (see
// captured), so it can only write a delta. A snapshot extends the newest
// chain written for an older capture — never a newer one's, so that
// checkpoints complete in capture order name chains that only grow or
// start afresh, and the retention of shared files (a checkpoint completing
// retires the older ones and deletes the files only they named) never
// deletes a file a newer checkpoint names.
//
// Two snapshots that extend one link both write a delta or both a base
// (the choice depends on the link only), so neither's completion retires
// files the other names. A snapshot older than every link remembered,
// written after maxLinks newer ones, could break that and is refused: its
// checkpoint is declined (the newer ones subsume it anyway). So is a delta
// capture with no chain left to extend (a reset, another storage) or only
// one older than the chain it holds the changes since, and the next
// capture takes every entry. A delta capture extends its link even
// when the link wants a base: a full capture behind it writes that one.
func (c *chain) plan(loc string, v uint64, epoch int, delta bool, since uint64) (plan, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	full := plan{epoch: epoch, full: true}
	gone := func() error {
		c.needBase = true
		return fmt.Errorf("heap: the snapshot of capture %d holds the changes since a chain of checkpoint storage %q that is not there any more; "+
			"its checkpoint is declined and the next one is written in full", v, loc)
	}
	if epoch != c.epoch || loc != c.loc {
		if delta {
			return plan{}, gone()
		}
		return full, nil
	}
	i := len(c.links) - 1
	for i >= 0 && c.links[i].version >= v {
		i--
	}
	switch {
	case i < 0 && len(c.links) == maxLinks:
		return plan{}, fmt.Errorf("heap: the snapshot of capture %d is written after %d newer ones; its checkpoint is declined", v, maxLinks)
	case i < 0 && delta:
		return plan{}, gone()
	case i < 0:
		return full, nil
	}
	l := c.links[i]
	if delta && l.version < since {
		// The capture holds the changes since a newer chain only: a full
		// snapshot written late, to another storage, made this one the
		// newest there (a review's find).
		return plan{}, gone()
	}
	if l.version < c.pruned { // a late snapshot's base: the changes after it are no longer recorded
		if delta {
			return plan{}, gone()
		}
		return full, nil
	}
	if !delta && l.wantsBase() {
		return full, nil
	}
	p := plan{epoch: epoch, from: l}
	for _, cp := range c.pend {
		if cp.version > l.version && cp.version <= v {
			p.changes = append(p.changes, cp)
		}
	}
	return p, nil
}

// written records that storage loc holds the state at capture version v
// in p's files and h, the file just written.
func (c *chain) written(loc string, v uint64, p plan, h state.FileHandle) []state.FileHandle {
	l := link{version: v, files: []state.FileHandle{h}, baseSize: h.Size}
	if !p.full {
		l = link{version: v, files: append(slices.Clone(p.from.files), h), baseSize: p.from.baseSize,
			deltaSize: p.from.deltaSize + h.Size}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.IndexFunc(c.pend, func(cp capture) bool { return cp.version == v }); i >= 0 {
		l.live = c.pend[i].live // else 0: the deltas alone decide
	}
	if p.epoch != c.epoch {
		return l.files
	}
	if loc != c.loc {
		c.loc, c.links = loc, nil
	}
	i, _ := slices.BinarySearchFunc(c.links, v, func(x link, v uint64) int { return cmp.Compare(x.version, v) })
	c.links = slices.Insert(c.links, i, l)
	if n := len(c.links) - maxLinks; n > 0 {
		c.links = slices.Delete(c.links, 0, n)
	}
	oldest := c.links[0].version
	c.pruned = max(c.pruned, oldest)
	c.pend = slices.DeleteFunc(c.pend, func(cp capture) bool { return cp.version <= oldest })
	return l.files
}

// reset makes the next checkpoint write a base: a state registered since
// the last snapshots changed the format of its entries (its TTL setting
// differs from the restored one's, which they wrote back verbatim).
// Snapshots captured before write bases that nothing extends.
func (c *chain) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	c.loc, c.links = "", nil
}

// incrementalSnapshot is a snapshot that a checkpoint writes as a base or
// a delta in shared files.
type incrementalSnapshot struct {
	*snapshot
	chain   *chain
	version uint64 // the capture version
	epoch   int    // the chain's epoch at the capture
	// delta: only the entries of changed keys were captured (see
	// Backend.Snapshot); the snapshot can only be written as a delta.
	delta bool
	// since, for a delta, is the version of the chain whose later changes
	// it holds (deltaKeys.since).
	since uint64
}

var _ state.IncrementalSnapshot = (*incrementalSnapshot)(nil)

// manifest is the JSON part of an incremental checkpoint's state file.
type manifest struct {
	MaxParallelism int                `json:"maxParallelism"`
	Files          []state.FileHandle `json:"files"`
}

// WriteFiles writes a base or a delta (see the top of this file) into a
// shared file of files' storage and returns the manifest naming the
// chain.
func (s *incrementalSnapshot) WriteFiles(files state.SnapshotFiles) (blob []byte, needs []state.FileHandle, err error) {
	defer s.flight.land()
	loc := files.Location()
	p, err := s.chain.plan(loc, s.version, s.epoch, s.delta, s.since)
	if err != nil {
		return nil, nil, err
	}
	kind := "delta"
	if p.full {
		kind = "base"
	}
	name := fmt.Sprintf("%s/%d.%s", s.chain.group, s.version, kind)
	hs, err := files.Put([]state.LocalFile{{Name: name, Write: s.producer(p), Shared: true}})
	if err != nil {
		return nil, nil, err
	}
	needs = s.chain.written(loc, s.version, p, hs[0])
	m, err := json.Marshal(manifest{MaxParallelism: s.maxParallelism, Files: needs})
	if err != nil {
		return nil, nil, err
	}
	return append([]byte(manifestMagic), m...), needs, nil
}

// producer returns what writes the base or the delta into checkpoint
// storage, streaming, a key group at a time. A codec that panics makes it
// return an error, as Write does.
func (s *incrementalSnapshot) producer(p plan) func(io.Writer) error {
	var all []map[string][]changes
	for _, cp := range p.changes {
		all = append(all, cp.changed)
	}
	var changed map[string][]changes
	if !p.full {
		changed = union(all)
	}
	return func(w io.Writer) (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("heap: writing keyed state snapshot: %v", r)
			}
		}()
		bw := bufio.NewWriterSize(w, 1<<20)
		if p.full {
			err = s.writeFull(bw)
		} else {
			err = s.writeDelta(bw, changed)
		}
		if err == nil {
			err = bw.Flush()
		}
		return err
	}
}

// writeFull writes the snapshot as a canonical blob (the package doc's
// format), a key group at a time, so that it never holds the whole blob
// (nor pages in a fresh one at every checkpoint, half of q9's CPU):
// a state's every group is written, empty ones with no entries.
func (s *snapshot) writeFull(out io.Writer) error {
	w := &writer{keyCodec: s.keyCodec, now: s.now}
	buf := append([]byte(blobMagic), wire.AppendUvarint(nil, uint64(s.maxParallelism))...)
	buf = wire.AppendUvarint(buf, uint64(len(s.states)))
	for _, c := range s.states {
		buf = appendHeader(buf, c.header(), c.groupCount())
		for i := range c.groupCount() {
			kg := s.start + i
			var n int
			if buf, n = w.appendGroup(buf, c, kg, i); n == 0 {
				buf = wire.AppendUvarint(wire.AppendUvarint(buf, uint64(kg)), 0)
			}
			if _, err := out.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := out.Write(buf)
	return err
}

func appendHeader(buf []byte, h stateHeader, groups int) []byte {
	buf = wire.AppendString(buf, h.name)
	buf = append(buf, byte(h.kind), boolByte(h.hasTTL))
	return wire.AppendUvarint(buf, uint64(groups))
}

// union merges the changed keys of several captures (in capture order):
// a key keeps the record of the first that found it (a list appended to
// from its length then) unless a later one found it changed wholly.
func union(cs []map[string][]changes) map[string][]changes {
	if len(cs) == 1 {
		return cs[0]
	}
	out := map[string][]changes{}
	for _, c := range cs {
		for name, groups := range c {
			u := out[name]
			if u == nil {
				u = make([]changes, len(groups))
				out[name] = u
			}
			for i, keys := range groups {
				if keys.w.len() > 0 && u[i].w == nil {
					u[i].w = newWordMap[int](keys.w.len())
				}
				if len(keys.f) > 0 && u[i].f == nil {
					u[i].f = make(map[shortKey]int, len(keys.f))
				}
				if len(keys.s) > 0 && u[i].s == nil {
					u[i].s = make(map[string]int, len(keys.s))
				}
				if len(keys.a) > 0 && u[i].a == nil {
					u[i].a = make(map[any]int, len(keys.a))
				}
				mergeChanges(u[i].w, keys.w)
				mergeChanges(u[i].f, keys.f)
				mergeChanges(u[i].s, keys.s)
				mergeChanges(u[i].a, keys.a)
			}
		}
	}
	return out
}

// mergeChanges adds a later capture's records in to out (see union).
func mergeChanges[K comparable, C kindMap[K, int]](out, in C) {
	for k, how := range in.all() {
		if _, ok := out.get(k); !ok || how == changedWhole {
			out.set(k, how)
		}
	}
}

// userKeyChanges returns, of the keys the captures cps (in capture order)
// found changed, the maps changed in some user keys only in every capture
// that found them, with the union of those user keys: a delta holds only
// their changes. One capture's are its records, changes and all; a union's
// records hold the user keys alone (mapTable.detach reads their changes).
func userKeyChanges(cps []capture) map[string][]userKeys {
	if len(cps) == 1 {
		return cps[0].uks // its records are of its changed keys (groups.touchUK)
	}
	out := map[string][]userKeys{}
	seen := map[string][]keyMap[bool]{}
	for _, cp := range cps {
		for name, groups := range cp.changed {
			if out[name] == nil {
				out[name], seen[name] = make([]userKeys, len(groups)), make([]keyMap[bool], len(groups))
			}
			for i, keys := range groups {
				var uks userKeys
				if u := cp.uks[name]; u != nil {
					uks = u[i]
				}
				o, s := &out[name][i], &seen[name][i]
				if keys.w.len() > 0 && o.w == nil {
					o.w, s.w = newWordMap[*ukRecord](0), newWordMap[bool](0)
				}
				if len(keys.f) > 0 && o.f == nil {
					o.f, s.f = map[shortKey]*ukRecord{}, map[shortKey]bool{}
				}
				if len(keys.s) > 0 && o.s == nil {
					o.s, s.s = map[string]*ukRecord{}, map[string]bool{}
				}
				if len(keys.a) > 0 && o.a == nil {
					o.a, s.a = map[any]*ukRecord{}, map[any]bool{}
				}
				userKeysOf(keys.w, uks.w, o.w, s.w)
				userKeysOf(keys.f, uks.f, o.f, s.f)
				userKeysOf(keys.s, uks.s, o.s, s.s)
				userKeysOf(keys.a, uks.a, o.a, s.a)
			}
		}
	}
	return out
}

// userKeysOf adds to out the keys of a group a capture found changed: a
// key seen first keeps its user keys if only those changed; a key seen
// before keeps its record, with these user keys added, only if again only
// user keys changed. A record is the capture's own until a second capture
// adds to it (seen[k]: out[k] is the union's own), so one capture costs
// no copy of its records; a union's records hold user keys alone.
func userKeysOf[K comparable, C kindMap[K, int], U kindMap[K, *ukRecord], S kindMap[K, bool]](keys C, uks, out U, seen S) {
	for k := range keys.all() {
		u, partial := uks.get(k)
		if copied, ok := seen.get(k); ok {
			if prev, kept := out.get(k); kept && partial {
				if !copied {
					prev = keysOf(prev, prev.len()+u.len())
					seen.set(k, true)
				}
				u.eachKey(prev.addKey)
				out.set(k, prev)
			} else if kept {
				out.del(k)
			}
			continue
		}
		seen.set(k, false)
		if partial {
			out.set(k, u)
		}
	}
}

// keysOf returns a record of r's user keys alone, with room for n.
func keysOf(r *ukRecord, n int) *ukRecord {
	out := newUKRecord(n, noGen)
	r.eachKey(out.addKey)
	return out
}

// writeDelta writes the entries of the changed keys (the format at the top
// of this file): of those only appended to (changes), the elements
// appended; of maps whose capture holds user keys' changes (detach), those
// changes.
func (s *snapshot) writeDelta(out io.Writer, changed map[string][]changes) error {
	w := &writer{keyCodec: s.keyCodec, now: s.now}
	var states []captured
	for _, c := range s.states {
		if changedGroups(changed[c.header().name]) > 0 {
			states = append(states, c)
		}
	}
	buf := append([]byte(deltaMagic), wire.AppendUvarint(nil, uint64(s.maxParallelism))...)
	buf = wire.AppendUvarint(buf, uint64(len(states)))
	for _, c := range states {
		groups := changed[c.header().name]
		buf = appendHeader(buf, c.header(), changedGroups(groups))
		for i, keys := range groups {
			if keys.len() == 0 {
				continue
			}
			buf = wire.AppendUvarint(buf, uint64(s.start+i))
			buf = wire.AppendUvarint(buf, uint64(keys.len()))
			buf = c.appendKeys(buf, i, keys, w)
			if _, err := out.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	_, err := out.Write(buf)
	return err
}

func changedGroups(groups []changes) int {
	n := 0
	for _, keys := range groups {
		if keys.len() > 0 {
			n++
		}
	}
	return n
}

// appendKeys appends, for each key of keys, the key and its op (appendKey).
// String keys are encoded and looked up unboxed.
func (c *capturedGroups[E]) appendKeys(body []byte, i int, keys changes, w *writer) []byte {
	if c.lists != nil {
		return c.appendList(body, &c.lists[i], keys, w)
	}
	m := c.maps[i]
	var partial userKeys
	if c.partial != nil {
		partial = c.partial[i]
	}
	for k, how := range keys.w.all() {
		w.key = w.encodeString(w.key[:0], w.wordView(k))
		e, ok := m.w.get(k)
		r, _ := partial.w.get(k)
		body = c.appendKey(body, w.key, e, ok, how, r, w.now)
	}
	for k, how := range keys.f {
		w.key = w.encodeString(w.key[:0], w.shortView(k))
		e, ok := m.f[k]
		body = c.appendKey(body, w.key, e, ok, how, partial.f[k], w.now)
	}
	for k, how := range keys.s {
		w.key = w.encodeString(w.key[:0], k)
		e, ok := m.s[k]
		body = c.appendKey(body, w.key, e, ok, how, partial.s[k], w.now)
	}
	for k, how := range keys.a {
		w.key = w.keyCodec.Encode(w.key[:0], k)
		e, ok := m.a[k]
		body = c.appendKey(body, w.key, e, ok, how, partial.a[k], w.now)
	}
	return body
}

// appendList appends, for each key of keys, the key and its op, from l:
// the capture's list of the group. The capture took the keys changed since
// the newest chain written then, the writer writes those changed since the
// link its plan extends, which is that one or a newer one: keys is l's
// record itself, or holds some of l's keys, each as it says it changed.
func (c *capturedGroups[E]) appendList(body []byte, l *capturedList[E], keys changes, w *writer) []byte {
	same := sameChanges(l.keys, keys)
	n := 0
	body = appendCaptured(c, body, l.w, keys.w, same, &n, w, func(k wordKey) []byte {
		return w.encodeString(w.key[:0], w.wordView(k))
	})
	body = appendCaptured(c, body, l.f, keys.f, same, &n, w, func(k shortKey) []byte {
		return w.encodeString(w.key[:0], w.shortView(k))
	})
	body = appendCaptured(c, body, l.s, keys.s, same, &n, w, func(k string) []byte { return w.encodeString(w.key[:0], k) })
	body = appendCaptured(c, body, l.a, keys.a, same, &n, w, func(k any) []byte { return w.keyCodec.Encode(w.key[:0], k) })
	if n != keys.len() {
		panic(fmt.Sprintf("a delta writes %d changed keys of a group, of which its capture took %d", keys.len(), n))
	}
	return body
}

// appendCaptured appends the keys of list that keys holds (all when same),
// each encoded by key, with its op as keys says it changed, counting them
// in n.
func appendCaptured[K comparable, E any, C kindMap[K, int]](c *capturedGroups[E], body []byte, list []capturedKey[K, E], keys C,
	same bool, n *int, w *writer, key func(K) []byte) []byte {
	for _, x := range list {
		how := x.how
		if !same {
			var in bool
			if how, in = keys.get(x.k); !in {
				continue
			}
		}
		w.key = key(x.k)
		body = c.appendKey(body, w.key, x.e, x.ok, how, nil, w.now)
		*n++
	}
	return body
}

// sameChanges reports whether a and b are one record (the same maps).
func sameChanges(a, b changes) bool {
	return a.w == b.w && mapID(a.f) == mapID(b.f) && mapID(a.s) == mapID(b.s) && mapID(a.a) == mapID(b.a)
}

// mapID is the identity of map m.
func mapID[K comparable, V any](m goMap[K, V]) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// appendKey appends the encoded key and its op: its entry e's payload, or
// a delete when the group holds no live entry under it (!ok); the
// elements appended when it was only appended to (how, see changes), or
// the user key changes of r when the capture holds those (r not nil).
func (c *capturedGroups[E]) appendKey(body, key []byte, e E, ok bool, how int, r *ukRecord, now int64) []byte {
	body = wire.AppendBytes(body, key)
	mark := len(body)
	if ok && r != nil {
		at := len(body) + 1
		return prefixLength(c.uks(append(body, 3), r), at)
	}
	if ok && how != changedWhole && c.tail != nil {
		body = wire.AppendUvarint(append(body, 2), uint64(how))
		at := len(body)
		if tail, full := c.tail(body, e, how); full {
			return prefixLength(tail, at)
		}
		body = body[:mark]
	}
	body = append(body, 0)
	if ok {
		var live bool
		if body, live = appendEntry(body, c.encode, e, now); live {
			return body
		}
	}
	return append(body[:mark], 1)
}

// Write writes the snapshot in full, as a savepoint does; a delta capture
// (captured after SnapshotFor(true)) holds too little for that.
func (s *incrementalSnapshot) Write() ([]byte, error) {
	if s.delta {
		s.flight.land()
		return nil, fmt.Errorf("heap: the snapshot of capture %d was taken for an incremental checkpoint and holds only the changed entries; "+
			"it cannot be written in full", s.version)
	}
	return s.snapshot.Write()
}
