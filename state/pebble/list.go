package pebble

import (
	"github.com/weirstream/weir/state"
	"github.com/weirstream/weir/state/internal/wire"
)

// listTable stores ListState: one Pebble entry per key, the elements
// concatenated, each [ts varint] element(len+bytes). Add appends with a
// merge (Pebble's concatenating merge operator), without reading the list.
type listTable struct {
	tbase
	// merged holds the keys (Pebble key prefixes) appended to since their
	// list was last written whole: the next Get writes the merged list
	// back, so that later Gets find one value instead of walking every
	// merge operand. It is only a hint, bounded by maxMerged.
	merged map[string]struct{}
}

const maxMerged = 1 << 16

var _ state.ListTable = (*listTable)(nil)

func (t *listTable) Get() []any {
	k := t.prefix()
	raw, ok := t.b.get(k)
	if !ok {
		return nil
	}
	items := t.items(raw)
	if t.si.ttl.Enabled() {
		items = t.refresh(k, items, t.b.opts.Clock())
	}
	if _, ok := t.merged[string(k)]; ok {
		delete(t.merged, string(k))
		if len(items) > 0 {
			t.b.set(k, t.encode(items))
		}
	}
	if len(items) == 0 {
		return nil
	}
	out := make([]any, len(items))
	for j, it := range items {
		out[j] = t.decode(t.sp.Codec, it.enc)
	}
	return out
}

func (t *listTable) items(raw []byte) []item {
	items, ok := parseItems(raw, t.si.hasTS)
	if !ok {
		panic(corrupt("pebble: state %q: stored list", t.si.name))
	}
	return items
}

// refresh drops expired elements and, if reads refresh the TTL, restamps
// the rest, writing the list back when it changed.
func (t *listTable) refresh(k []byte, items []item, now int64) []item {
	live := items[:0:0]
	for _, it := range items {
		if !t.si.ttl.Expired(it.ts, now) {
			live = append(live, it)
		}
	}
	switch {
	case len(live) == 0:
		t.b.del(k)
		return nil
	case t.si.ttl.OnRead:
		for j := range live {
			live[j].ts = now
		}
	case len(live) == len(items):
		return items
	}
	t.b.set(k, t.encode(live))
	return live
}

func (t *listTable) encode(items []item) []byte {
	t.vbuf = t.vbuf[:0]
	for _, it := range items {
		t.vbuf = appendItem(t.vbuf, t.si.hasTS, it.ts, it.enc)
	}
	return t.vbuf
}

// appendElems appends vs in the stored form, stamped now.
func (t *listTable) appendElems(buf []byte, vs []any, now int64) []byte {
	for _, v := range vs {
		if t.si.hasTS {
			buf = wire.AppendVarint(buf, now)
		}
		buf = appendPrefixed(buf, t.sp.Codec, v)
	}
	return buf
}

// KeepsEncodings reports that values are encoded when added, not kept
// (state.EncodingKeeper).
func (t *listTable) KeepsEncodings() bool { return true }

func (t *listTable) Add(v any) { t.AddAll([]any{v}) }

func (t *listTable) AddAll(vs []any) {
	if len(vs) == 0 {
		return
	}
	k := t.prefix()
	t.vbuf = t.appendElems(t.vbuf[:0], vs, t.now())
	t.b.merge(k, t.vbuf)
	if t.merged == nil {
		t.merged = map[string]struct{}{}
	}
	if len(t.merged) < maxMerged {
		t.merged[string(k)] = struct{}{}
	}
}

func (t *listTable) Update(vs []any) {
	if len(vs) == 0 {
		t.Delete()
		return
	}
	k := t.prefix()
	t.vbuf = t.appendElems(t.vbuf[:0], vs, t.now())
	t.b.set(k, t.vbuf)
}

func (t *listTable) Delete() { t.b.del(t.prefix()) }

func (t *listTable) cleanup(prefix []byte, now int64) int {
	raw, ok := t.b.get(prefix)
	if !ok {
		return 0
	}
	items := t.items(raw)
	n := 0
	for _, it := range items {
		if t.si.ttl.Expired(it.ts, now) {
			n++
		}
	}
	switch {
	case n == 0:
	case n == len(items):
		t.b.del(prefix)
	default:
		live := items[:0:0]
		for _, it := range items {
			if !t.si.ttl.Expired(it.ts, now) {
				live = append(live, it)
			}
		}
		t.b.set(prefix, t.encode(live))
	}
	return n
}

// appendPrefixed appends c's encoding of v behind its uvarint length.
func appendPrefixed(buf []byte, c state.Codec[any], v any) []byte {
	return wire.AppendBytes(buf, c.Encode(nil, v))
}
