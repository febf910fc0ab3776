package heap

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"unsafe"

	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/keyed"
	"github.com/weirstream/weir/state/internal/wire"
)

// placedTable stores a ListState without TTL whose codec keeps values in
// place (state.InPlace): each value's encoding is a record in chunks the
// table owns, and a key's list is the place of its newest record and
// their count (placedList), with no pointer per value. The collector
// marks a listTable's state again at every cycle, a pointer or two per
// value, and at Nexmark q7's 9.2 M join rows at 10 M events that was
// most of what the growing state cost (bench/nexmark/README.md, "What the
// state's layout costs at scale"); a placedTable's entries hold no pointer
// for the collector to follow but their keys' (and a nil one, set only
// for a list of elements).
//
// Why a snapshot may read the chunks while the subtask appends: a record
// is never changed once written, and a capture reads only records made
// before it, through the chunks' lists as they were then (chunkView);
// the subtask writes only past the fill, and a new chunk goes at the end
// of its group's list or into new lists (a compaction). A list's value the codec keeps as it
// is (KeepsInPlace false: a lookup side, read far more often than written)
// turns the whole list into elements (placedList.boxed), as listTable
// keeps them, each value placed before read in a copy of its own.
type placedTable struct {
	core[placedList]
	placing
}

// placing is what a table keeping values in place (placedTable,
// placedValueTable) holds beside its entries.
type placing struct {
	name   string // the state's
	codec  state.Codec[any]
	ip     state.InPlace[any]
	chunks chunkStore
	// scratch is where a value is encoded before it is placed, when it is
	// not encoded where it goes (place); last is the size of the last
	// value encoded.
	scratch []byte
	last    int
	// loading is the index of the group a restore is loading (load).
	loading int
	// compactions counts compactions.
	compactions int
}

func newPlacing(b *Backend, sp state.StateSpec, ip state.InPlace[any]) placing {
	return placing{name: sp.Name, codec: sp.Codec, ip: ip, chunks: newChunkStore(b.groupCount())}
}

// loadingGroup notes the group whose entries decode places (groupLoader).
func (p *placing) loadingGroup(i int) { p.loading = i }

// view is the value of a record's encoding, read in place.
func (p *placing) view(enc []byte) any {
	v, err := p.ip.View(enc)
	if err != nil {
		panic(fmt.Sprintf("heap: state %q: codec cannot view its own encoding: %v", p.name, err))
	}
	return v
}

var (
	_ state.ListTable      = (*placedTable)(nil)
	_ state.ListAppender   = (*placedTable)(nil)
	_ state.EncodingKeeper = (*placedTable)(nil)
)

// KeepsEncodings reports that a value kept in place is not kept, only
// its encoding (state.EncodingKeeper).
func (t *placedTable) KeepsEncodings() bool { return true }

// placedList is one key's list in a placedTable: n records linked from
// head, the newest's place plus 1 (0 when none), each holding the place
// of the one before; or, once the list holds a value kept as it is, all
// of its values as elements (boxed, a new slice at every change, so that
// a captured entry's never changes). ver is the backend's version at the
// list's last write (listTable.Add's shortcut).
type placedList struct {
	head  uint64
	n     int
	ver   uint64
	boxed *[]elem
}

func (e placedList) len() int {
	if e.boxed != nil {
		return len(*e.boxed)
	}
	return e.n
}

// placesInPlace reports whether a list or value state of spec is kept in
// a placedTable or placedValueTable: its codec keeps values in place and
// declares them immutable, and it has no TTL (a chunk lives while any
// record in it is read, so expired records would keep their chunks).
func placesInPlace(sp state.StateSpec) (state.InPlace[any], bool) {
	ip := state.InPlaceOf(sp.Codec)
	if ip == nil || !state.IsImmutableType(sp.Codec) || keyed.NewTTL(sp.TTL).Enabled() {
		return nil, false
	}
	return ip, true
}

func newPlacedTable(b *Backend, sp state.StateSpec, ip state.InPlace[any]) *placedTable {
	t := &placedTable{core: newCore[placedList](b, sp), placing: newPlacing(b, sp, ip)}
	t.data.logChanges()
	t.ops = t
	return t
}

func (t *placedTable) Get() []any {
	out := t.AppendTo(nil)
	if len(out) == 0 {
		return nil
	}
	return out
}

// AppendTo appends the current key's list to out (state.ListAppender).
func (t *placedTable) AppendTo(out []any) []any {
	k, i := t.b.current()
	e, ok := t.data.get(i, k)
	if !ok {
		return out
	}
	if e.boxed != nil {
		for _, el := range *e.boxed {
			out = append(out, el.v)
		}
		return out
	}
	base := len(out)
	out = slices.Grow(out, e.n)[:base+e.n]
	at := e.head
	for j := e.n - 1; j >= 0; j-- {
		var enc []byte
		at, enc = t.chunks.record(at)
		out[base+j] = t.view(enc)
	}
	return out
}

func (t *placedTable) Add(v any) {
	k, i := t.b.current()
	e, _ := t.data.get(i, k)
	n := e.len()
	fresh := n > 0 && e.ver == t.b.version
	e = t.appendValue(i, e, v)
	e.ver = t.b.version
	if fresh {
		// Written since the last capture: the key's change is recorded
		// already (as in listTable.Add).
		t.data.writable(i).set(k, e)
		return
	}
	t.data.putAppend(i, k, e, n)
}

func (t *placedTable) AddAll(vs []any) {
	if len(vs) == 0 {
		return
	}
	k, i := t.b.current()
	e, _ := t.data.get(i, k)
	n := e.len()
	for _, v := range vs {
		e = t.appendValue(i, e, v)
	}
	e.ver = t.b.version
	t.data.putAppend(i, k, e, n)
}

func (t *placedTable) Update(vs []any) {
	if len(vs) == 0 {
		t.Delete()
		return
	}
	k, i := t.b.current()
	if old, ok := t.data.get(i, k); ok {
		t.drop(old)
	}
	var e placedList
	for _, v := range vs {
		e = t.appendValue(i, e, v)
	}
	e.ver = t.b.version
	t.data.put(i, k, e)
	t.compactIfWasteful(i)
}

func (t *placedTable) Delete() { deletePlaced(&t.core, t.drop, t.compactIfWasteful) }

// deletePlaced deletes the current key's entry of c, a placed table's,
// dropping its records, then compacts the key's group if that made its
// chunks wasteful.
func deletePlaced[E any](c *core[E], drop func(E), compact func(i int)) {
	k, i := c.b.current()
	old, ok := c.data.get(i, k)
	if !ok {
		return
	}
	drop(old)
	c.data.del(i, k)
	compact(i)
}

// appendValue returns e, a list of group index i, with v appended: its
// encoding placed, or, for a value kept as it is, v itself with the list
// turned into elements.
func (t *placedTable) appendValue(i int, e placedList, v any) placedList {
	inPlace := t.ip.KeepsInPlace(v)
	if e.boxed == nil && inPlace {
		e.head = t.place(i, e.head, v)
		e.n++
		return e
	}
	items := t.elems(e)
	if inPlace {
		// The value is not kept (state.InPlace): a copy of its encoding is.
		t.scratch = t.sp.Codec.Encode(t.scratch[:0], v)
		v = t.view(bytes.Clone(t.scratch))
	}
	items = append(items, elem{v: v, ver: t.b.version})
	return placedList{boxed: &items}
}

// elems is e's values as elements: its elements, appended to in place
// (as listTable appends: a captured entry reads only the elements it
// has), or those in its records, each read in place in a copy of its own,
// the records dropped. A list of elements holds nothing in the chunks,
// so that its values free their memory when it goes.
func (t *placedTable) elems(e placedList) []elem {
	if e.boxed != nil {
		return *e.boxed
	}
	items := make([]elem, e.n, e.n+1)
	at := e.head
	for j := e.n - 1; j >= 0; j-- {
		var enc []byte
		at, enc = t.chunks.record(at)
		items[j] = elem{v: t.view(bytes.Clone(enc)), ver: t.b.version}
		t.chunks.dropRecord(groupOf(e.head), enc)
	}
	return items
}

// drop counts e's records as dropped (see compactIfWasteful).
func (t *placedTable) drop(e placedList) {
	if e.boxed != nil {
		return
	}
	at := e.head
	for range e.n {
		var enc []byte
		at, enc = t.chunks.record(at)
		t.chunks.dropRecord(groupOf(e.head), enc)
	}
}

// compactIfWasteful copies the records of group index i's lists into new
// chunks when more than half of the bytes placed in the group, and enough
// (chunkStore.wasteful), belong to lists replaced or deleted: without it
// a state of lists updated in place would grow without end. A group at a
// time, so that one write pauses the subtask for one group's records,
// not the state's. The old chunks stay while a snapshot in flight, or a
// value read from them, holds them. Entries change only their places, so
// no change is recorded.
func (t *placedTable) compactIfWasteful(i int) {
	if !t.chunks.wasteful(i) {
		return
	}
	old := t.chunks.reset(i)
	compactGroup(&t.data, i, func(e placedList) placedList { return copyList(old, &t.chunks, i, e) })
	t.compactions++
}

// wasteful reports whether more than half of the bytes placed in group
// index i, and its share of placedMinWaste or more (at least 4 KB, or
// all of placedMinWaste when smaller), are dropped records'.
func (c *chunkStore) wasteful(i int) bool {
	g := &c.groups[i]
	least := max(placedMinWaste/int64(len(c.groups)), min(placedMinWaste, 4<<10))
	return g.dead >= least && g.dead >= g.live
}

// reset empties group index i's chunks and returns their list, clipped.
func (c *chunkStore) reset(i int) [][]byte {
	old := slices.Clip(c.groups[i].list)
	c.groups[i] = groupChunks{cur: -1}
	return old
}

// compactGroup sets every entry of group index i of g to move's copy of
// it, move placing its records in new chunks (a compaction).
func compactGroup[E any](g *groups[E], i int, move func(e E) E) {
	m := g.maps[i]
	if m.len() == 0 {
		return
	}
	w := g.writable(i)
	for k, e := range m.w.all() {
		w.w.set(k, move(e))
	}
	for k, e := range m.f {
		w.f[k] = move(e)
	}
	for k, e := range m.s {
		w.s[k] = move(e)
	}
	for k, e := range m.a {
		w.a[k] = move(e)
	}
}

// placedMinWaste is the least dropped bytes that make a compaction (a
// variable for tests).
var placedMinWaste int64 = 16 << 20

// copyList returns e, a list of group index i, with its records copied,
// in order, from the group's chunks old into to.
func copyList(old [][]byte, to *chunkStore, i int, e placedList) placedList {
	if e.boxed != nil || e.n == 0 {
		return e
	}
	encs := make([][]byte, e.n)
	at := e.head
	for j := e.n - 1; j >= 0; j-- {
		at, encs[j] = readRecord(old, at)
	}
	e.head = 0
	for _, enc := range encs {
		e.head = to.put(i, e.head, enc)
	}
	return e
}

// records returns the encodings of e's records from index from on, in
// order, read in chunks view, in scratch's room if it has enough.
func records(view chunkView, e placedList, from int, scratch [][]byte) [][]byte {
	out := slices.Grow(scratch[:0], e.n-from)[:e.n-from]
	at := e.head
	for j := len(out) - 1; j >= 0; j-- {
		at, out[j] = view.record(at)
	}
	return out
}

func (t *placedTable) encode(buf []byte, e placedList, _ int64) ([]byte, bool) {
	return t.encodeIn(t.chunks.view(), nil, buf, e, 0)
}

func (t *placedTable) encodeTail(buf []byte, e placedList, from int) ([]byte, bool) {
	if from > e.len() {
		return buf, false
	}
	return t.encodeIn(t.chunks.view(), nil, buf, e, from)
}

// encodeIn appends the payload of e's values from index from on, as
// listTable's encode writes them (a list without TTL), reading records in
// chunks list; false when it has none (a full entry) — a tail may be
// empty.
//
// scratch, when not nil, holds the records' slice from one call to the
// next (one snapshot's, written on one goroutine).
func (t *placedTable) encodeIn(view chunkView, scratch *[][]byte, buf []byte, e placedList, from int) ([]byte, bool) {
	if from == 0 && e.len() == 0 {
		return buf, false
	}
	buf = wire.AppendUvarint(buf, uint64(e.len()-from))
	if e.boxed != nil {
		for _, el := range (*e.boxed)[from:] {
			buf = appendPrefixed(buf, t.sp.Codec, el.v)
		}
		return buf, true
	}
	if e.n-from == 1 { // one appended since the last capture, most often
		_, enc := view.record(e.head)
		return wire.AppendBytes(buf, enc), true
	}
	var room [][]byte
	if scratch != nil {
		room = *scratch
	}
	encs := records(view, e, from, room)
	for _, enc := range encs {
		buf = wire.AppendBytes(buf, enc)
	}
	if scratch != nil {
		clear(encs) // no chunk held past the list's encoding
		*scratch = encs
	}
	return buf, true
}

// capture is core's, its entries encoded from the chunks as they are now.
func (t *placedTable) capture(delta bool, d tableDelta) captured {
	out := t.core.capture(delta, d).(*capturedGroups[placedList])
	view := t.chunks.view()
	var scratch [][]byte
	out.encode = func(buf []byte, e placedList, _ int64) ([]byte, bool) {
		return t.encodeIn(view, &scratch, buf, e, 0)
	}
	out.tail = func(buf []byte, e placedList, from int) ([]byte, bool) {
		if from > e.len() {
			return buf, false
		}
		return t.encodeIn(view, &scratch, buf, e, from)
	}
	return out
}

// decode places a restored list's values, in the chunks of the group
// loadingGroup named. A value the codec keeps as it
// is turns the list into elements.
func (t *placedTable) decode(p []byte, hasTS bool, now int64) (placedList, bool, error) {
	r := wire.NewReader(p)
	n := r.Count(1)
	var e placedList
	ver := t.b.loadedVersion()
	for j := 0; j < n && r.Err() == nil; j++ {
		readTS(r, hasTS, t.ttl, now)
		b := r.Bytes()
		if r.Err() != nil {
			break
		}
		v, err := decodeAll(t.sp.Codec, b)
		if err != nil {
			return placedList{}, false, err
		}
		e = t.restoreValue(t.loading, e, v, b, ver)
	}
	if r.Err() != nil || r.Len() != 0 {
		return placedList{}, false, corrupt("list payload: %v, %d bytes left", r.Err(), r.Len())
	}
	e.ver = ver
	return e, e.len() > 0, nil
}

// restoreValue returns e, a list of group index i, with v, decoded from
// enc, appended: enc placed as it is when v is kept in place.
func (t *placedTable) restoreValue(i int, e placedList, v any, enc []byte, ver uint64) placedList {
	inPlace := t.ip.KeepsInPlace(v)
	if e.boxed == nil && inPlace {
		e.head = t.chunks.put(i, e.head, enc)
		e.n++
		return e
	}
	items := t.elems(e)
	if inPlace {
		v = t.view(bytes.Clone(enc))
	}
	items = append(items, elem{v: v, ver: ver})
	return placedList{boxed: &items}
}

// sweep: a placedTable has no TTL, so nothing expires.
func (t *placedTable) sweep(e placedList, _ int64) (placedList, int, bool) {
	return e, 0, e.len() > 0
}

func (t *placedTable) entryLen(e placedList) int { return e.len() }

func (t *placedTable) countable() bool { return true }

// estimateEntry encodes up to sample of e's newest values: records are
// reached from the newest, and without TTL nothing expires, so the
// newest stand for the rest.
func (t *placedTable) estimateEntry(e placedList, _ int64, sample int) int64 {
	n := min(sample, e.len())
	if n == 0 {
		return 0
	}
	var bytes int64
	if e.boxed != nil {
		items := *e.boxed
		for _, el := range items[len(items)-n:] {
			bytes += int64(len(appendPrefixed(nil, t.sp.Codec, el.v)))
		}
		return scaled(bytes, n, e.len())
	}
	at := e.head
	for range n {
		var enc []byte
		at, enc = t.chunks.record(at)
		bytes += uvarintLen(len(enc)) + int64(len(enc))
	}
	return scaled(bytes, n, e.len())
}

// chunkStore holds a placedTable's records, in chunks of each key group
// apart: a delta reads the records appended in the last checkpoint
// interval group by group, from a few hundred KB of each group's newest
// chunks instead of all over the interval's records. Each record is the
// place of the record before it in its list (plus 1; 0 for none, 8
// bytes), its encoding's length (4 bytes) and its encoding. A place holds
// the group's index (upper 15 bits), the chunk's index in the group's
// list (17 bits) and the record's offset in it (lower 32). Chunks never
// move and are never written below their fill; a group's list only grows
// at its end.
type chunkStore struct {
	groups []groupChunks
}

// groupChunks are one key group's chunks: cur is the index of the one
// records are placed in (-1: none yet), fill the bytes of it used; live
// and dead are the bytes of its records in entries and of those dropped
// (compactIfWasteful).
type groupChunks struct {
	list       [][]byte
	cur, fill  int
	live, dead int64
}

// chunkView is the chunks' lists of each group as they were at a
// capture: a capture reads the records made before it while more are
// placed.
type chunkView [][][]byte

const (
	// placeChunk is the size chunks grow to, from firstChunk, doubling
	// (a group of few records takes little: a subtask of 32,768 key
	// groups holds 16 MB of first chunks), or more when a record needs it:
	// as the SQL join's row arena's (sql/exec rowArena), so the collector
	// finds a few large spans, and a chunk's unused tail is nothing beside
	// the state.
	placeChunk = 256 << 10
	firstChunk = 512
	// placeMaxRecord is the largest record placed in a shared chunk; a
	// larger one gets a chunk of its own, so that no chunk is mostly one
	// record's or its unused tail.
	placeMaxRecord = placeChunk / 16
	recordHead     = 12
	groupShift     = 49
	maxChunks      = 1<<17 - 1
)

func newChunkStore(groups int) chunkStore {
	c := chunkStore{groups: make([]groupChunks, groups)}
	for i := range c.groups {
		c.groups[i].cur = -1
	}
	return c
}

// place places a record of v's encoding, of group index i, after the
// one at prev and returns its place plus 1: encoded where the record
// goes, in the room left in the group's current chunk, or, when it does
// not fit there, in scratch and then copied (put).
//
// A value whose encoding is larger than the room, or than placeMaxRecord,
// is encoded in scratch: whether it fits is known only once it is
// encoded, so the room is tried only when the table's last encoding would
// have fitted in it and was not a record of a chunk of its own.
func (p *placing) place(i int, prev uint64, v any) uint64 {
	room, ok := p.chunks.room(i)
	if !ok || cap(room) < p.last || p.last > placeMaxRecord-recordHead {
		p.scratch = p.codec.Encode(p.scratch[:0], v)
		p.last = len(p.scratch)
		return p.chunks.put(i, prev, p.scratch)
	}
	enc := p.codec.Encode(room, v)
	p.last = len(enc)
	if len(enc) == 0 || unsafe.SliceData(enc) != unsafe.SliceData(room) || len(enc) > placeMaxRecord-recordHead {
		// It did not fit, or is a record of a chunk of its own (Encode
		// appended elsewhere, or the record goes elsewhere; the chunk's
		// bytes past its fill, which nothing reads, stay as it wrote them).
		return p.chunks.put(i, prev, enc)
	}
	return p.chunks.putRoom(i, prev, len(enc))
}

// room is the empty slice where a record's encoding goes in group index
// i's current chunk, with the rest of the chunk as its capacity; false
// when the group has no chunk, or no room for a record's head.
func (c *chunkStore) room(i int) ([]byte, bool) {
	g := &c.groups[i]
	if g.cur < 0 || len(g.list[g.cur])-g.fill <= recordHead {
		return nil, false
	}
	chunk := g.list[g.cur]
	start := g.fill + recordHead
	return chunk[start:start:len(chunk)], true
}

// putRoom places the record whose encoding, of size bytes, was written in
// group index i's room, after the one at prev, and returns its place
// plus 1.
func (c *chunkStore) putRoom(i int, prev uint64, size int) uint64 {
	g := &c.groups[i]
	chunk := g.list[g.cur]
	enc := chunk[g.fill+recordHead : g.fill+recordHead+size]
	n := recordHead + len(enc)
	b := chunk[g.fill : g.fill+n]
	binary.LittleEndian.PutUint64(b, prev)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(enc)))
	off := g.fill
	g.fill += n
	g.live += int64(n)
	return uint64(i)<<groupShift | uint64(g.cur)<<32 | uint64(off) + 1
}

// put places a record of enc, of group index i, after the one at prev
// and returns its place plus 1.
func (c *chunkStore) put(i int, prev uint64, enc []byte) uint64 {
	n := recordHead + len(enc)
	if uint64(len(enc)) > 1<<32-1 {
		panic(fmt.Sprintf("heap: a state value of %d bytes encoded", len(enc)))
	}
	g := &c.groups[i]
	var chunk, off int
	switch {
	case n > placeMaxRecord:
		chunk = g.add(n)
	default:
		if g.cur < 0 || g.fill+n > len(g.list[g.cur]) {
			size := firstChunk
			if g.cur >= 0 {
				size = min(placeChunk, 2*len(g.list[g.cur]))
			}
			for size < n { // n <= placeMaxRecord < placeChunk
				size *= 2
			}
			g.cur, g.fill = g.add(size), 0
		}
		chunk, off = g.cur, g.fill
		g.fill += n
	}
	b := g.list[chunk][off : off+n]
	binary.LittleEndian.PutUint64(b, prev)
	binary.LittleEndian.PutUint32(b[8:], uint32(len(enc)))
	copy(b[recordHead:], enc)
	g.live += int64(n)
	return uint64(i)<<groupShift | uint64(chunk)<<32 | uint64(off) + 1
}

// add appends a chunk of size bytes and returns its index.
func (g *groupChunks) add(size int) int {
	if len(g.list) == maxChunks {
		panic(fmt.Sprintf("heap: a key group's state holds %d chunks, the most a place can name", maxChunks))
	}
	g.list = append(g.list, make([]byte, size))
	return len(g.list) - 1
}

// dropRecord counts the record of enc, of group index i, as dropped.
func (c *chunkStore) dropRecord(i int, enc []byte) {
	g := &c.groups[i]
	n := int64(recordHead + len(enc))
	g.live, g.dead = g.live-n, g.dead+n
}

// groupOf is the group index of the record at place at (plus 1).
func groupOf(at uint64) int { return int((at - 1) >> groupShift) }

// view is the chunks' lists as they are now (chunkView).
func (c *chunkStore) view() chunkView {
	v := make(chunkView, len(c.groups))
	for i := range c.groups {
		v[i] = slices.Clip(c.groups[i].list)
	}
	return v
}

// record reads the record at place at (plus 1): the place of the one
// before it, and its encoding. Only the subtask's goroutine calls it.
func (c *chunkStore) record(at uint64) (prev uint64, enc []byte) {
	return readRecord(c.groups[(at-1)>>groupShift].list, at)
}

// record reads the record at place at (plus 1) as chunkStore.record does,
// in the chunks as they were at the view.
func (v chunkView) record(at uint64) (prev uint64, enc []byte) {
	return readRecord(v[(at-1)>>groupShift], at)
}

func readRecord(list [][]byte, at uint64) (prev uint64, enc []byte) {
	p := at - 1
	b := list[(p>>32)&maxChunks][uint32(p):]
	n := recordHead + int(binary.LittleEndian.Uint32(b[8:]))
	return binary.LittleEndian.Uint64(b), b[recordHead:n:n]
}
