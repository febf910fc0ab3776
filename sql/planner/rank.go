package planner

import (
	"fmt"
	"strconv"
	"time"

	"github.com/weirstream/weir/duration"
	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/binrow"
	"github.com/weirstream/weir/sql/exec"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// rankPattern is Flink's Top-N / deduplication query shape:
// SELECT … FROM (SELECT …, ROW_NUMBER() OVER (PARTITION BY … ORDER BY …) AS rn
// FROM t) WHERE rn <= N.
type rankPattern struct {
	inner  *parser.Select
	over   *parser.WindowSpec
	rnItem int
	rnName string
	// start and n are the ranks kept: start <= rn <= n (rn = N, rn BETWEEN
	// M AND N, rn > M set a start above 1).
	start  int
	n      int
	rest   []parser.Expr // other conjuncts of the outer WHERE
	rnUsed bool          // the outer query reads the rank number
}

func findRankPattern(s *parser.Select) (*rankPattern, bool) {
	dt, ok := s.From.(*parser.DerivedTable)
	if !ok || s.Where == nil {
		return nil, false
	}
	inner, ok := dt.Query.Body.(*parser.Select)
	if !ok {
		return nil, false
	}
	rp := &rankPattern{inner: inner, rnItem: -1}
	for i, it := range inner.Items {
		if f, ok := it.Expr.(*parser.FuncCall); ok && f.Name == "ROW_NUMBER" && f.Over != nil {
			rp.over, rp.rnItem, rp.rnName = f.Over, i, itemName(it, i)
		}
	}
	if rp.rnItem < 0 {
		return nil, false
	}
	rp.start, rp.n = 1, -1
	for _, c := range conjuncts(s.Where) {
		lo, hi, ok := rankBound(c, rp.rnName)
		if !ok {
			rp.rest = append(rp.rest, c)
			continue
		}
		rp.start = max(rp.start, lo)
		if hi > 0 && (rp.n < 0 || hi < rp.n) {
			rp.n = hi
		}
	}
	rp.rnUsed = readsColumn(s, rp.rnName)
	return rp, rp.n > 0 && rp.n >= rp.start
}

// readsColumn reports whether the SELECT list, the other WHERE conjuncts,
// GROUP BY or HAVING of s mention column name (or select *).
func readsColumn(s *parser.Select, name string) bool {
	found := false
	visit := func(e parser.Expr) bool {
		switch x := e.(type) {
		case *parser.Ident:
			found = found || x.Parts[len(x.Parts)-1] == name
		case *parser.Star:
			found = true
		}
		return !found
	}
	for _, it := range s.Items {
		walk(it.Expr, visit)
	}
	for _, g := range s.GroupBy {
		walk(g, visit)
	}
	walk(s.Having, visit)
	for _, c := range conjuncts(s.Where) {
		if _, _, isBound := rankBound(c, name); !isBound {
			walk(c, visit)
		}
	}
	return found
}

// rankBound reads a bound on the rank number: rn = N, rn <= N, rn < N,
// rn >= M, rn > M, rn BETWEEN M AND N. It returns the lowest and highest
// rank it allows, 0 for no bound.
func rankBound(e parser.Expr, rn string) (lo, hi int, ok bool) {
	isRN := func(x parser.Expr) bool {
		id, ok := x.(*parser.Ident)
		return ok && id.Parts[len(id.Parts)-1] == rn
	}
	num := func(x parser.Expr) (int, bool) {
		lit, ok := x.(*parser.NumberLit)
		if !ok {
			return 0, false
		}
		n, err := strconv.Atoi(lit.Text)
		return n, err == nil
	}
	if b, isBetween := e.(*parser.Between); isBetween {
		lo, ok1 := num(b.Lo)
		hi, ok2 := num(b.Hi)
		return lo, hi, ok1 && ok2 && !b.Not && isRN(b.X)
	}
	b, isBinary := e.(*parser.Binary)
	if !isBinary || !isRN(b.L) {
		return 0, 0, false
	}
	n, isNum := num(b.R)
	if !isNum {
		return 0, 0, false
	}
	switch b.Op {
	case parser.Eq:
		return n, n, true
	case parser.Le:
		return 0, n, true
	case parser.Lt:
		return 0, n - 1, true
	case parser.Ge:
		return n, 0, true
	case parser.Gt:
		return n + 1, 0, true
	}
	return 0, 0, false
}

func (p *Planner) planRank(s *parser.Select, rp *rankPattern) (*Rel, error) {
	restore := p.withNeeds(rp.inner) // the inner block's FROM, pruned by its own names
	in, err := p.planSourceWhere(rp.inner.From, rp.inner.Where)
	restore()
	if err != nil {
		return nil, err
	}
	var keys []int
	for _, e := range rp.over.PartitionBy {
		i := identIndex(in, e)
		if i < 0 {
			return nil, errAt(e.Position(), "PARTITION BY %s: partition keys must be columns", parser.Format(e))
		}
		keys = append(keys, i)
	}
	if len(rp.over.OrderBy) == 0 {
		return nil, errAt(rp.over.Pos, "ROW_NUMBER() needs ORDER BY")
	}
	ranked, err := p.windowRank(in, keys, rp)
	if err != nil {
		return nil, err
	}
	if ranked != nil {
		return p.afterRank(s, rp, ranked)
	}
	ranked, err = p.rankOp(in, keys, rp)
	if err != nil {
		return nil, err
	}
	return p.afterRank(s, rp, ranked)
}

// rankOp chooses deduplication (N = 1 ordered by a time attribute) or
// Top-N, and appends the rank number column.
func (p *Planner) rankOp(in *Rel, keys []int, rp *rankPattern) (*Rel, error) {
	first := rp.over.OrderBy[0]
	oi := identIndex(in, first.Expr)
	isTime := oi >= 0 && (oi == in.RowTime || in.Cols[oi].Type.TimeAttr == "proctime")
	if isProctimeCall(first.Expr) {
		isTime, oi = true, -1 // ORDER BY PROCTIME(): processing time, no column
	}
	if rp.n == 1 && len(rp.over.OrderBy) == 1 && isTime {
		ttl, err := p.stateTTL(rp.inner)
		if err != nil {
			return nil, err
		}
		return p.dedup(in, keys, oi, first.Desc, ttl), nil
	}
	return p.topN(in, keys, rp)
}

// dedup plans a Deduplicate ordered by column timeCol, or by PROCTIME()
// when timeCol is -1.
func (p *Planner) dedup(in *Rel, keys []int, timeCol int, keepLast bool, ttl time.Duration) *Rel {
	opts := exec.DedupOptions{PartitionKeys: keys, KeepLast: keepLast, RowTime: timeCol >= 0 && timeCol == in.RowTime,
		TimeField: max(timeCol, 0), StateTTL: ttl}
	format := ""
	if ts := colTypes(in.Cols); (keepLast || opts.RowTime) && binrow.Supports(ts) {
		opts.Types, format = ts, "binary rows" // the kept row; first row on proctime keeps a flag
	}
	order := "PROCTIME()"
	if timeCol >= 0 {
		order = in.Cols[timeCol].Name
	}
	cols := append(append([]expr.Column(nil), in.Cols...), expr.Column{Name: "$rn", Type: types.Type{Kind: types.BigInt}})
	which := "first"
	if keepLast {
		which = "last"
	}
	r := &Rel{Op: "Deduplicate", Detail: fmt.Sprintf("keep=[%s], key=[%s], order=[%s]", which, keyNames(in, keys), order),
		Inputs: []*Rel{in}, Cols: cols, RowTime: -1, InsertOnly: !keepLast && !opts.RowTime && in.InsertOnly, uniqueKey: keys,
		stateFormat: format}
	// Only first-row deduplication on processing time is append-only: on
	// event time an earlier row arriving later replaces the kept one.
	if !r.InsertOnly {
		r.UpdatesFrom = firstNonEmpty(in.UpdatesFrom, "Deduplicate(keep=["+which+"])")
	}
	// On event time the kept rows keep their time attribute, either way
	// (Flink's versioned view: the last row per key ordered by rowtime).
	if opts.RowTime {
		r.RowTime = in.RowTime
	}
	key := exec.FieldKeyOf(keys...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		n, err := b.checkedKeyed("Deduplicate", ins[0], key, opOf(exec.NewDeduplicate, opts))
		if err != nil {
			return nil, err
		}
		return b.withRowNumber(n, in.Cols), nil
	}
	return r
}

func keyNames(in *Rel, keys []int) string {
	cols := make([]expr.Column, len(keys))
	for i, k := range keys {
		cols[i] = in.Cols[k]
	}
	return colNames(cols)
}

// sortKeys reads the ORDER BY of a ROW_NUMBER over in; what names the
// operator in the error.
func sortKeys(in *Rel, over *parser.WindowSpec, what string) ([]exec.SortKey, error) {
	var order []exec.SortKey
	for _, o := range over.OrderBy {
		i := identIndex(in, o.Expr)
		if i < 0 {
			return nil, errAt(o.Expr.Position(), "ORDER BY %s: %s orders by columns", parser.Format(o.Expr), what)
		}
		order = append(order, exec.SortKey{Field: i, Desc: o.Desc})
	}
	return order, nil
}

func (p *Planner) topN(in *Rel, keys []int, rp *rankPattern) (*Rel, error) {
	order, err := sortKeys(in, rp.over, "Top-N")
	if err != nil {
		return nil, err
	}
	// Without rn in the result, rows enter (+I) and leave (-D) the top N;
	// with it, every rank shift is an update (Flink's two Top-N outputs).
	opts := exec.TopNOptions{PartitionKeys: keys, OrderBy: order, N: rp.n, Start: rp.start, RankNumber: rp.rnUsed,
		InputInsertOnly: in.InsertOnly, StateTTL: p.Config.StateTTL}
	format := ""
	if ts := colTypes(in.Cols); binrow.Supports(ts) {
		opts.Types, format = ts, "binary rows"
	}
	if _, err := exec.NewTopN(opts); err != nil {
		return nil, err
	}
	cols := append([]expr.Column(nil), in.Cols...)
	if rp.rnUsed {
		cols = append(cols, expr.Column{Name: "$rn", Type: types.Type{Kind: types.BigInt}})
	}
	rng := fmt.Sprintf("rankRange=[%d..%d]", max(1, rp.start), rp.n)
	r := &Rel{Op: "Rank", Detail: fmt.Sprintf("%s, partitionBy=[%s]", rng, keyNames(in, keys)),
		Inputs: []*Rel{in}, Cols: cols, RowTime: -1, stateFormat: format}
	r.updating(firstNonEmpty(in.UpdatesFrom, fmt.Sprintf("Rank(%s)", rng)))
	key := exec.FieldKeyOf(keys...)
	r.build = func(b *builder, ins []*graph.Node) (*graph.Node, error) {
		return b.checkedKeyed("Rank", ins[0], key, opOf(exec.NewTopN, opts))
	}
	return r, nil
}

// afterRank applies the inner SELECT list (rn read from the rank column)
// and the outer WHERE's other conjuncts; the caller goes on with the outer
// SELECT (projection or aggregation).
func (p *Planner) afterRank(s *parser.Select, rp *rankPattern, ranked *Rel) (*Rel, error) {
	rnCol := len(ranked.Cols) - 1
	resolve := func(e parser.Expr) (*expr.Compiled, error) {
		if f, ok := e.(*parser.FuncCall); ok && f.Name == "ROW_NUMBER" {
			if (ranked.Op == "Rank" || ranked.Op == "WindowRank") && !rp.rnUsed {
				// Not selected: a placeholder the outer query drops.
				return &expr.Compiled{Type: types.Type{Kind: types.BigInt}, Eval: func([]any) (any, error) { return nil, nil }}, nil
			}
			return fieldRef(rnCol, ranked.Cols[rnCol].Type), nil
		}
		return nil, nil
	}
	inner, err := p.project(ranked, rp.inner.Items, resolve)
	if err != nil {
		return nil, err
	}
	alias := ""
	if dt, ok := s.From.(*parser.DerivedTable); ok {
		alias = dt.Alias
	}
	out, err := renamed(inner, alias, nil)
	if err != nil {
		return nil, err
	}
	for _, c := range rp.rest {
		if out, err = p.filter(out, c, nil); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// stateTTL is the state TTL of the operator a SELECT plans to: its
// /*+ STATE_TTL('table' = '1 d') */ hint (Flink 1.18's per-operator TTL),
// else table.exec.state.ttl.
func (p *Planner) stateTTL(s *parser.Select) (time.Duration, error) {
	for _, h := range s.Hints {
		if h.Name != "STATE_TTL" {
			continue
		}
		for _, o := range h.Options {
			d, err := duration.Parse(o.Value)
			if err != nil {
				return 0, errAt(h.Pos, "STATE_TTL('%s' = '%s'): %v", o.Key, o.Value, err)
			}
			return d, nil
		}
	}
	return p.Config.StateTTL, nil
}

// colTypes is the types of cols.
func colTypes(cols []expr.Column) []types.Type {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return ts
}
