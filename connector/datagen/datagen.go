// Package datagen is Flink's datagen connector: rows with random or
// sequence values per column, at a rate, bounded by number-of-rows (or by
// sequence ends) or unbounded. Values are a pure function of the row's
// number, so a restored source regenerates exactly what it would have.
package datagen

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/weirstream/weir/duration"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// Splits is the number of logical splits (row n belongs to split n mod Splits).
const Splits = 4

// field says how one column is generated.
type field struct {
	name       string
	typ        types.Type
	sequence   bool
	start, end int64 // sequence bounds (inclusive)
	min, max   float64
	length     int
	maxPast    time.Duration
	nullRate   float64
}

// Source generates rows of a schema.
type Source struct {
	fields        []field
	rowsPerSecond float64 // 0: unthrottled
	rows          int64   // -1: unbounded
	seed          int64
	now           time.Time
}

// FromOptions builds a source from Flink's datagen options: rows-per-second
// (default 10000), number-of-rows (default unbounded), and per column
// fields.<col>.kind (random|sequence), .min, .max, .length, .start, .end,
// .max-past (a duration in Flink's syntax, '5 min' or '300000'; a plain
// number is milliseconds), .null-rate.
func FromOptions(schema []types.Field, opts map[string]string) (*Source, error) {
	s := &Source{rowsPerSecond: 10000, rows: -1, now: time.Now().UTC()}
	if err := s.parseGlobal(opts); err != nil {
		return nil, err
	}
	for _, f := range schema {
		gf, err := parseField(f, opts)
		if err != nil {
			return nil, err
		}
		s.fields = append(s.fields, gf)
		if gf.sequence && (s.rows < 0 || gf.end-gf.start+1 < s.rows) {
			s.rows = gf.end - gf.start + 1
		}
	}
	return s, nil
}

func (s *Source) parseGlobal(opts map[string]string) error {
	if v, ok := opts["rows-per-second"]; ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 {
			return fmt.Errorf("datagen: 'rows-per-second' must be a non-negative number, got %q", v)
		}
		s.rowsPerSecond = f
	}
	if v, ok := opts["number-of-rows"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("datagen: 'number-of-rows' must be a non-negative integer, got %q", v)
		}
		s.rows = n
	}
	if v, ok := opts["seed"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("datagen: 'seed' must be an integer, got %q", v)
		}
		s.seed = n
	}
	return nil
}

func parseField(f types.Field, opts map[string]string) (field, error) {
	g := field{name: f.Name, typ: f.Type, min: 0, max: 1000, length: 10, maxPast: 0}
	if f.Type.IsInteger() {
		g.min, g.max = 0, 1<<31-1
	}
	p := "fields." + f.Name + "."
	var err error
	get := func(k string, parse func(string) error) {
		if v, ok := opts[p+k]; ok && err == nil {
			if e := parse(v); e != nil {
				err = fmt.Errorf("datagen: '%s%s' = %q: %v", p, k, v, e)
			}
		}
	}
	get("kind", func(v string) error {
		switch strings.ToLower(v) {
		case "random":
		case "sequence":
			g.sequence = true
		default:
			return fmt.Errorf("want random or sequence")
		}
		return nil
	})
	get("min", func(v string) (e error) { g.min, e = strconv.ParseFloat(v, 64); return })
	get("max", func(v string) (e error) { g.max, e = strconv.ParseFloat(v, 64); return })
	get("length", func(v string) (e error) { g.length, e = strconv.Atoi(v); return })
	get("start", func(v string) (e error) { g.start, e = strconv.ParseInt(v, 10, 64); return })
	get("end", func(v string) (e error) { g.end, e = strconv.ParseInt(v, 10, 64); return })
	get("max-past", func(v string) (e error) { g.maxPast, e = duration.Parse(v); return })
	get("null-rate", func(v string) (e error) { g.nullRate, e = strconv.ParseFloat(v, 64); return })
	if err == nil && g.sequence && g.end < g.start {
		err = fmt.Errorf("datagen: column %q: a sequence needs 'fields.%s.start' <= 'fields.%s.end'", f.Name, f.Name, f.Name)
	}
	return g, err
}

// Row returns row number n (0-based).
func (s *Source) Row(n int64) []any {
	out := make([]any, len(s.fields))
	for i, f := range s.fields {
		out[i] = s.value(f, i, n)
	}
	return out
}

func (s *Source) value(f field, col int, n int64) any {
	if f.sequence {
		return convert(f.typ, f.start+n)
	}
	h := fnv.New64a()
	var b [24]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	binary.LittleEndian.PutUint64(b[8:], uint64(col))
	binary.LittleEndian.PutUint64(b[16:], uint64(s.seed))
	_, _ = h.Write(b[:])
	rnd := rand.New(rand.NewSource(int64(h.Sum64())))
	if f.nullRate > 0 && rnd.Float64() < f.nullRate {
		return nil
	}
	return s.random(f, rnd)
}

func (s *Source) random(f field, rnd *rand.Rand) any {
	switch {
	case f.typ.IsInteger():
		return int64(f.min) + rnd.Int63n(int64(f.max-f.min)+1)
	case f.typ.Kind == types.Float || f.typ.Kind == types.Double:
		return f.min + rnd.Float64()*(f.max-f.min)
	case f.typ.Kind == types.Decimal:
		v := f.min + rnd.Float64()*(f.max-f.min)
		return decimal.NewFromFloat(v).Round(int32(f.typ.Scale))
	case f.typ.Kind == types.Boolean:
		return rnd.Intn(2) == 1
	case f.typ.Kind == types.Timestamp || f.typ.Kind == types.TimestampLTZ:
		past := time.Duration(0)
		if f.maxPast > 0 {
			past = time.Duration(rnd.Int63n(int64(f.maxPast)))
		}
		return s.now.Add(-past).Truncate(time.Millisecond)
	}
	const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, f.length)
	for i := range b {
		b[i] = letters[rnd.Intn(len(letters))]
	}
	return string(b)
}

func convert(t types.Type, v int64) any {
	switch {
	case t.Kind == types.Float || t.Kind == types.Double:
		return float64(v)
	case t.Kind == types.Decimal:
		return decimal.NewFromInt(v)
	case t.IsString():
		return strconv.FormatInt(v, 10)
	}
	return v
}

// Bounded implements operator.Source.
func (s *Source) Bounded() bool { return s.rows >= 0 }

// Enumerate implements operator.Source: Splits splits from row 0.
func (s *Source) Enumerate(context.Context) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, Splits)
	for i := range out {
		out[i] = operator.SplitState{ID: strconv.Itoa(i), Position: binary.AppendUvarint(nil, uint64(i))}
	}
	return out, nil
}

// AssignSplit gives split i to reader i mod n.
func (s *Source) AssignSplit(id string, n int) int {
	i, _ := strconv.Atoi(id)
	return i % n
}

// CreateReader implements operator.Source.
func (s *Source) CreateReader(ctx operator.ReaderContext) (operator.SourceReader, error) {
	return &reader{s: s, next: map[string]int64{}, start: time.Now(), par: max(1, ctx.Parallelism)}, nil
}

type reader struct {
	s       *Source
	ids     []string
	next    map[string]int64
	done    operator.FinishedSplits
	start   time.Time
	emitted int64
	par     int
	ready   chan struct{}
}

func (r *reader) AddSplits(ss []operator.SplitState) error {
	for _, sp := range ss {
		p, k := binary.Uvarint(sp.Position)
		if k <= 0 {
			return fmt.Errorf("datagen: corrupt position of split %s", sp.ID)
		}
		r.ids = append(r.ids, sp.ID)
		r.next[sp.ID] = int64(p)
	}
	return nil
}

// Poll emits the lowest-numbered row left among the reader's splits, so a
// reader emits its rows in row order (at parallelism 1 a sequence comes
// out 1, 2, 3, … as Flink's does) and every split advances: one split read
// to its end before the next starts would hold each split's watermark, and
// so the source's, at its minimum until the last split starts (never, for
// an unbounded source). A split of a bounded source is reported finished
// (operator.SplitListener) right after its last row.
func (r *reader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	if wait := r.throttle(); wait > 0 {
		r.ready = make(chan struct{})
		c := r.ready
		time.AfterFunc(wait, func() { close(c) })
		return operator.NothingAvailable, nil
	}
	id, n := "", int64(-1)
	for _, s := range r.ids {
		m := r.next[s]
		if r.ended(m) {
			r.done.Finish(out, s) // a no-op unless it had no rows when added
			continue
		}
		if n < 0 || m < n {
			id, n = s, m
		}
	}
	if n < 0 {
		return operator.EndOfInput, nil
	}
	out.Collect(id, event.Record{Value: event.Row{Kind: event.Insert, Fields: r.s.Row(n)}, Timestamp: event.NoTimestamp})
	r.next[id] = n + Splits
	r.emitted++
	if r.ended(n + Splits) {
		r.done.Finish(out, id)
	}
	return operator.MoreAvailable, nil
}

// ended reports whether a split whose next row is n has no more rows; a
// split of an unbounded source never ends.
func (r *reader) ended(n int64) bool { return r.s.rows >= 0 && n >= r.s.rows }

// throttle returns how long to wait to keep this reader's share of
// rows-per-second.
func (r *reader) throttle() time.Duration {
	if r.s.rowsPerSecond <= 0 {
		return 0
	}
	rate := r.s.rowsPerSecond / float64(r.par)
	due := r.start.Add(time.Duration(float64(r.emitted) / rate * float64(time.Second)))
	return time.Until(due)
}

func (r *reader) Available() <-chan struct{} { return r.ready }

func (r *reader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, 0, len(r.ids))
	for _, id := range r.ids {
		out = append(out, operator.SplitState{ID: id, Position: binary.AppendUvarint(nil, uint64(r.next[id]))})
	}
	return out, nil
}

func (r *reader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }
func (r *reader) Close() error                                      { return nil }
