package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/weirstream/weir/connector/nexmark"
	"github.com/weirstream/weir/keygroup"
)

// modelArg is the hidden first argument of the state model: a query's
// largest state alone, at two sizes. It replays the run's bids into a
// structure that holds what the query keeps, in one of four layouts (one
// without pointers for the collector, Go maps, the layout of Weir's heap
// state backend for a list kept as elements, and its layout for one kept
// in place), optionally with the garbage the rest of a pipeline
// makes, and measures the process's CPU per event. The difference between
// the sizes is what the state's growth costs in that layout, apart from
// the rest of the engine (README, twenty-first session).
const modelArg = "state-model"

// modelShapes are the queries the model knows: what their largest state
// keeps per bid.
var modelShapes = map[string]struct {
	list bool // every row kept, in a list per key; else the last row per key
	key  func(b *nexmark.Bid) []byte
	what string
}{
	// q18: the last bid of each (bidder, auction), Deduplicate's state.
	"q18": {false, func(b *nexmark.Bid) []byte { return modelKey(b.Bidder, b.Auction) }, "the last bid per (bidder, auction)"},
	// q7: every bid under its price, the regular join's state.
	"q7": {true, func(b *nexmark.Bid) []byte { return modelKey(b.Price) }, "every bid in a list per price"},
	// q20 (and q4, q9): every bid under its auction, the join's bid side.
	"q20": {true, func(b *nexmark.Bid) []byte { return modelKey(b.Auction) }, "every bid in a list per auction"},
}

func modelKey(ids ...int64) []byte {
	var k []byte
	for _, id := range ids {
		k = binary.BigEndian.AppendUint64(k, uint64(id))
	}
	return k
}

// modelBids is one subtask's bids in one buffer: per bid its key's length
// and bytes, then its row's length and bytes. Once generated, the buffer
// and the bids' offsets are moved out of the Go heap (offHeap), so that
// neither counts towards the collector's pacing or the memory limit.
type modelBids struct {
	buf  []byte
	offs []int // where each bid starts, and the end
	maps [][]byte
}

// offHeap moves the buffer and the offsets into memory mapped apart from
// the Go heap; release unmaps it.
func (m *modelBids) offHeap() error {
	if len(m.offs) == 0 {
		return nil
	}
	buf, err := syscall.Mmap(-1, 0, len(m.buf)+1, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return fmt.Errorf("mmap %d bytes: %w", len(m.buf)+1, err)
	}
	size := len(m.offs) * int(unsafe.Sizeof(0))
	raw, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		syscall.Munmap(buf)
		return fmt.Errorf("mmap %d bytes: %w", size, err)
	}
	offs := unsafe.Slice((*int)(unsafe.Pointer(unsafe.SliceData(raw))), len(m.offs))
	copy(offs, m.offs)
	m.buf, m.offs, m.maps = buf[:copy(buf, m.buf)], offs, [][]byte{buf, raw}
	return nil
}

func (m *modelBids) release() {
	for _, b := range m.maps {
		syscall.Munmap(b)
	}
	m.buf, m.offs, m.maps = nil, nil, nil
}

func (m *modelBids) len() int { return max(0, len(m.offs)-1) }

// at returns bid i's key and row, slices of the buffer.
func (m *modelBids) at(i int) (key, row []byte) {
	p := m.buf[m.offs[i]:m.offs[i+1]]
	kl := int(p[0])
	rl := int(binary.LittleEndian.Uint16(p[1+kl:]))
	return p[1 : 1+kl], p[3+kl : 3+kl+rl]
}

func (m *modelBids) add(key, row []byte) {
	if len(m.offs) == 0 {
		m.offs = append(m.offs, 0)
	}
	m.buf = append(m.buf, byte(len(key)))
	m.buf = append(m.buf, key...)
	m.buf = binary.LittleEndian.AppendUint16(m.buf, uint16(len(row)))
	m.buf = append(m.buf, row...)
	m.offs = append(m.offs, len(m.buf))
}

// modelRow is a bid as a row of bytes: its four numbers, then its
// strings (about a binary row's size).
func modelRow(b *nexmark.Bid) []byte {
	r := make([]byte, 0, 32+len(b.Channel)+len(b.URL)+len(b.Extra))
	for _, v := range []int64{b.Auction, b.Bidder, b.Price, b.DateTime.UnixNano()} {
		r = binary.LittleEndian.AppendUint64(r, uint64(v))
	}
	return append(append(append(r, b.Channel...), b.URL...), b.Extra...)
}

// generateModelBids draws the bids of a run of events (Nexmark's default
// proportions, one split) and deals them to subtasks by their key's key
// group, as a keyBy does (the same deal every run).
func generateModelBids(query string, events int64, subtasks int) ([]modelBids, error) {
	shape := modelShapes[query]
	g, err := nexmark.NewGenerator(nexmark.Config{EventsNum: events, FirstEventRate: DefaultTPS, Splits: 1})
	if err != nil {
		return nil, err
	}
	out := make([]modelBids, subtasks)
	for k := range events {
		e := g.Event(0, k)
		if e.Type != nexmark.BidEvent {
			continue
		}
		key := shape.key(e.Bid)
		g := keygroup.ForKey(string(key), keygroup.DefaultMaxParallelism)
		out[keygroup.OperatorIndex(g, keygroup.DefaultMaxParallelism, subtasks)].add(key, modelRow(e.Bid))
	}
	return out, nil
}

// modelLayouts are the ways the model holds the state.
var modelLayouts = []string{"flat", "maps", "weir", "refs"}

// modelState applies bids to the state of a query in one layout and
// returns the number of keys it holds.
func modelState(query, layout string, bids *modelBids, garbage int) int {
	list := modelShapes[query].list
	switch {
	case layout == "flat":
		return len(flatState(bids, list, garbage).index)
	case layout == "refs":
		return len(refsState(bids, list, garbage).index)
	case layout == "weir" && list:
		return len(weirLists(bids, garbage))
	case layout == "weir":
		return len(weirValues(bids, garbage))
	case list:
		m, _ := modelLists(bids, garbage)
		return len(m)
	}
	return len(modelValues(bids, garbage))
}

// modelChunk is the size of the chunks rows are copied into.
const modelChunk = 256 << 10

// chunks holds rows packed in chunks of modelChunk bytes, without
// pointers; a row is found by its place, the chunk's number in the upper
// 32 bits and the offset in it in the lower.
type chunks [][]byte

// add copies the bytes of parts, one after the other, into the last chunk
// (a new one when they do not fit) and returns their place.
func (c *chunks) add(parts ...[]byte) uint64 {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	last := len(*c) - 1
	if last < 0 || cap((*c)[last])-len((*c)[last]) < n {
		*c = append(*c, make([]byte, 0, max(modelChunk, n)))
		last++
	}
	at := uint64(last)<<32 | uint64(len((*c)[last]))
	for _, p := range parts {
		(*c)[last] = append((*c)[last], p...)
	}
	return at
}

// link adds row after the row at prev (a place plus 1; 0 for none) —
// prev's 8 bytes, row's length in 2, its bytes — and returns its place
// plus 1.
func (c *chunks) link(prev uint64, row []byte) uint64 {
	var head [10]byte
	binary.LittleEndian.PutUint64(head[:], prev)
	binary.LittleEndian.PutUint16(head[8:], uint16(len(row)))
	return c.add(head[:8], head[8:], row) + 1
}

// at returns n bytes at place at.
func (c chunks) at(at uint64, n int) []byte {
	off := int(uint32(at))
	return c[at>>32][off : off+n]
}

// litter makes about n bytes of short-lived garbage with pointers, as the
// rest of a pipeline makes per event (a row of boxed fields): collections
// then come as often as they do in a job, and each marks the state. The
// row is returned so that it is made on the heap; the caller drops it at
// the next bid.
//
//go:noinline
func litter(n int, row []byte) []any {
	if n <= 0 {
		return nil
	}
	fields := make([]any, 8)
	each := max(1, (n-8*16)/8)
	for i := range fields {
		fields[i] = string(row[:min(len(row), each)]) + string(make([]byte, max(0, each-len(row))))
	}
	return fields
}

// flat is the state without a pointer the collector must follow: a map
// from a fixed-size key to a place in chunks. A list's rows are linked
// newest first, each row after the place of the one before it (0 for
// none); a value is the place of its newest row (a replaced row is left
// in its chunk: a real store would compact them).
type flat struct {
	index  map[[16]byte]uint64 // the key's newest row's place, plus 1
	chunks chunks
}

func flatState(bids *modelBids, list bool, garbage int) *flat {
	f := &flat{index: map[[16]byte]uint64{}}
	var junk []any
	for i := range bids.len() {
		key, row := bids.at(i)
		junk = litter(garbage, row)
		var k [16]byte
		copy(k[:], key)
		prev := uint64(0)
		if list {
			prev = f.index[k]
		}
		f.index[k] = f.chunks.link(prev, row)
	}
	runtime.KeepAlive(junk)
	return f
}

// rows returns key's rows, oldest first.
func (f *flat) rows(key []byte) [][]byte {
	var k [16]byte
	copy(k[:], key)
	var out [][]byte
	for at := f.index[k]; at != 0; at = binary.LittleEndian.Uint64(f.chunks.at(at-1, 8)) {
		out = append(out, f.chunks.row(at-1+8))
	}
	slices.Reverse(out)
	return out
}

// modelValues applies bids to a Go map of the last row per key; each row
// is a copy of its own, as a state keeps it.
func modelValues(bids *modelBids, garbage int) map[string][]byte {
	m := map[string][]byte{}
	var junk []any
	for i := range bids.len() {
		key, row := bids.at(i)
		junk = litter(garbage, row)
		m[string(key)] = slices.Clone(row)
	}
	runtime.KeepAlive(junk)
	return m
}

// modelLists applies bids to a Go map of lists per key, each list the
// places of its rows in chunks.
func modelLists(bids *modelBids, garbage int) (map[string][]uint64, chunks) {
	return chunkLists(bids, garbage, func(_ chunks, at uint64) uint64 { return at })
}

// chunkLists applies bids to a Go map of lists per key: each row is
// copied into chunks (its length, then its bytes), and its list gets
// elem of the chunks and its place.
func chunkLists[E any](bids *modelBids, garbage int, elem func(c chunks, at uint64) E) (map[string][]E, chunks) {
	m := map[string][]E{}
	var c chunks
	var length [2]byte
	var junk []any
	for i := range bids.len() {
		key, row := bids.at(i)
		junk = litter(garbage, row)
		binary.LittleEndian.PutUint16(length[:], uint16(len(row)))
		at := c.add(length[:], row)
		m[string(key)] = append(m[string(key)], elem(c, at))
	}
	runtime.KeepAlive(junk)
	return m, c
}

// row reads the row at place at: its length, then its bytes.
func (c chunks) row(at uint64) []byte {
	n := int(binary.LittleEndian.Uint16(c.at(at, 2)))
	return c.at(at+2, n)
}

// weirElem is an element as Weir's heap state backend keeps it
// (state/heap's elem): the value boxed, a timestamp, a version.
type weirElem struct {
	v   any
	ts  int64
	ver uint64
}

// weirRow is a row as SQL's operators keep it in state (sql/exec's
// stateRow): a pointer to its length and bytes.
type weirRow struct{ p *byte }

// weirLists is a join side's state as Weir keeps it without a TTL: a Go
// map of the key's elements, each pointing to its row in a chunk.
func weirLists(bids *modelBids, garbage int) map[string][]weirElem {
	m, _ := chunkLists(bids, garbage, func(c chunks, at uint64) weirElem {
		return weirElem{v: weirRow{&c.at(at, 1)[0]}, ver: 1}
	})
	return m
}

// weirValues is a value state as Weir keeps it: a Go map of elements,
// each pointing to its row, an allocation of its own.
func weirValues(bids *modelBids, garbage int) map[string]weirElem {
	m := map[string]weirElem{}
	var junk []any
	for i := range bids.len() {
		key, row := bids.at(i)
		junk = litter(garbage, row)
		r := make([]byte, 2+len(row))
		binary.LittleEndian.PutUint16(r, uint16(len(row)))
		copy(r[2:], row)
		m[string(key)] = weirElem{v: weirRow{&r[0]}, ver: 1}
	}
	runtime.KeepAlive(junk)
	return m
}

// weirRowBytes reads a weirRow's bytes back.
func weirRowBytes(r weirRow) []byte {
	n := int(binary.LittleEndian.Uint16(unsafe.Slice(r.p, 2)))
	return unsafe.Slice(r.p, 2+n)[2:]
}

// modelRun is one run's measure: the bids applied, the events they came
// from, the keys the state holds after, and the process's user and system
// CPU (every goroutine's, the collector's too) while the subtasks applied
// them.
type modelRun struct {
	events, bids int64
	keys         int
	user, sys    time.Duration
}

func (r modelRun) nsPerEvent() float64 {
	return float64((r.user + r.sys).Nanoseconds()) / float64(r.events)
}

// runModel generates a run's bids and returns the memory of generating
// them, and of the runs before, to the system. Then it applies each
// subtask's bids on a goroutine of its own, all at once, as the subtasks
// of a job run: like a fresh process, the run faults in its pages.
func runModel(query, layout string, events int64, subtasks, garbage int) (modelRun, error) {
	parts, err := generateModelBids(query, events, subtasks)
	if err != nil {
		return modelRun{}, err
	}
	for i := range parts {
		defer parts[i].release()
		if err := parts[i].offHeap(); err != nil {
			return modelRun{}, err
		}
	}
	debug.FreeOSMemory()
	before, err := selfUsage()
	if err != nil {
		return modelRun{}, err
	}
	var wg sync.WaitGroup
	kept := make([]int, subtasks)
	for i := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			kept[i] = modelState(query, layout, &parts[i], garbage)
		}()
	}
	wg.Wait()
	after, err := selfUsage()
	if err != nil {
		return modelRun{}, err
	}
	run := modelRun{events: events,
		user: time.Duration(after.Utime.Nano() - before.Utime.Nano()),
		sys:  time.Duration(after.Stime.Nano() - before.Stime.Nano())}
	for i := range parts {
		run.bids += int64(parts[i].len())
		run.keys += kept[i]
	}
	return run, nil
}

// modelConfig is the model's flags.
type modelConfig struct {
	query, sizes, layouts  string
	rounds, subtasks, junk int
	gogc                   int
	memLimit               int64
}

func modelMain(args []string, out io.Writer) error {
	fs := flag.NewFlagSet(modelArg, flag.ContinueOnError)
	var c modelConfig
	fs.StringVar(&c.query, "query", "q7", "the query whose state is modelled: q7, q18 or q20")
	fs.StringVar(&c.layouts, "layouts", strings.Join(modelLayouts, ","), "the state's layouts, comma-separated: flat (no pointers), maps (Go maps of rows' copies), weir (as Weir's heap state backend keeps elements) or refs (as it keeps a list in place: string keys, entries without pointers)")
	fs.StringVar(&c.sizes, "events", "1000000,10000000", "the run sizes, comma-separated")
	fs.IntVar(&c.rounds, "rounds", 3, "runs of each layout and size, alternating")
	fs.IntVar(&c.subtasks, "parallelism", 2, "subtasks, each applying its bids on a goroutine")
	fs.IntVar(&c.junk, "garbage", 0, "bytes of short-lived garbage with pointers made per bid, as the rest of a pipeline makes (0: none)")
	fs.IntVar(&c.gogc, "gogc", DefaultGOGC, "the Go GC target percentage (GOGC), as Weir's child runs")
	fs.Int64Var(&c.memLimit, "memory-limit", 8<<30, "the Go soft memory limit in bytes (GOMEMLIMIT), as scale.sh runs Weir's child")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	ns, layouts, err := modelFlags(fs, c)
	if err != nil {
		return err
	}
	defer debug.SetGCPercent(debug.SetGCPercent(c.gogc))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(c.memLimit))
	type size struct {
		layout string
		events int64
	}
	runs := map[size][]modelRun{}
	for r := range c.rounds {
		for _, l := range layouts {
			for _, n := range ns {
				run, err := runModel(c.query, l, n, c.subtasks, c.junk)
				if err != nil {
					return err
				}
				runs[size{l, n}] = append(runs[size{l, n}], run)
				fmt.Fprintf(out, "round %d: %s %s, %d events, %d bids, %d keys: %.3f CPU-s (%.3f user, %.3f sys), %.1f ns per event\n",
					r, c.query, l, n, run.bids, run.keys, (run.user + run.sys).Seconds(), run.user.Seconds(), run.sys.Seconds(), run.nsPerEvent())
			}
		}
	}
	for _, l := range layouts {
		fmt.Fprintf(out, "%s %s (%s, %d bytes of garbage per bid), median ns per event:", c.query, l, modelShapes[c.query].what, c.junk)
		for _, n := range ns {
			fmt.Fprintf(out, " %.1f at %d events;", medianNs(runs[size{l, n}]), n)
		}
		delta, pct := modelChange(medianNs(runs[size{l, ns[0]}]), medianNs(runs[size{l, ns[len(ns)-1]}]))
		fmt.Fprintf(out, " %+.1f ns per event from the first size to the last, %+.1f %% events per CPU-second\n", delta, pct)
	}
	return nil
}

// modelFlags checks the flags, naming the one at fault, and returns the
// sizes and the layouts.
func modelFlags(fs *flag.FlagSet, c modelConfig) ([]int64, []string, error) {
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("unexpected argument %q: flags are -query, -layouts, -events, -rounds, -parallelism, -garbage, -gogc and -memory-limit", fs.Arg(0))
	}
	if _, ok := modelShapes[c.query]; !ok {
		return nil, nil, fmt.Errorf("-query %q: the model knows q7, q18 and q20", c.query)
	}
	if c.rounds <= 0 || c.subtasks <= 0 {
		return nil, nil, fmt.Errorf("-rounds and -parallelism must be positive, got %d and %d", c.rounds, c.subtasks)
	}
	if c.junk < 0 {
		return nil, nil, fmt.Errorf("-garbage must not be negative, got %d", c.junk)
	}
	if c.memLimit <= 0 {
		return nil, nil, fmt.Errorf("-memory-limit must be positive, got %d", c.memLimit)
	}
	var layouts []string
	for _, l := range strings.Split(c.layouts, ",") {
		l = strings.TrimSpace(l)
		if !slices.Contains(modelLayouts, l) || slices.Contains(layouts, l) {
			return nil, nil, fmt.Errorf("-layouts %q: %q is none of %s, or named twice", c.layouts, l, strings.Join(modelLayouts, ", "))
		}
		layouts = append(layouts, l)
	}
	var ns []int64
	for _, s := range strings.Split(c.sizes, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || n <= 0 || slices.Contains(ns, n) {
			return nil, nil, fmt.Errorf("-events %q: %q is not a positive number of events, or is named twice", c.sizes, s)
		}
		ns = append(ns, n)
	}
	return ns, layouts, nil
}

// modelChange is the change from the first size's ns per event to the
// last's, and the change in events per CPU-second in percent.
func modelChange(first, last float64) (deltaNs, pct float64) {
	return last - first, 100 * (first/last - 1)
}

func medianNs(runs []modelRun) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = r.nsPerEvent()
	}
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// refs is the layout of Weir's heap backend for a list without TTL whose
// rows it keeps in place (state/heap's placedTable): a Go map from the
// key, a string, to an entry without pointers, the place of the key's
// newest row plus 1 and the count of its rows, linked in chunks newest
// first as in flat. Only the keys are pointers.
type refs struct {
	index  map[string]refEntry
	chunks chunks
}

type refEntry struct {
	head uint64
	n    uint32
}

func refsState(bids *modelBids, list bool, garbage int) *refs {
	r := &refs{index: map[string]refEntry{}}
	var junk []any
	for i := range bids.len() {
		key, row := bids.at(i)
		junk = litter(garbage, row)
		e := r.index[string(key)]
		if !list {
			e = refEntry{}
		}
		r.index[string(key)] = refEntry{r.chunks.link(e.head, row), e.n + 1}
	}
	runtime.KeepAlive(junk)
	return r
}

// rows returns key's rows, oldest first.
func (r *refs) rows(key string) [][]byte {
	e := r.index[key]
	out := make([][]byte, e.n)
	at := e.head
	for j := len(out) - 1; j >= 0; j-- {
		out[j] = r.chunks.row(at - 1 + 8)
		at = binary.LittleEndian.Uint64(r.chunks.at(at-1, 8))
	}
	return out
}
