package exec

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// TestScripts runs the scripts in testdata against operators driven
// directly (regenerate expectations with -rewrite). Commands:
//
//	groupagg keys=(0,…) aggs=(kind:arg,…) [insert-only] [no-update-before] [emit-unchanged] [ttl=MS]
//	    [batch=N] [latency=MS]     (mini-batches of N rows, ended latency after their first row)
//	local-global keys=(…) aggs=(…) [insert-only] [batch=N] [latency=MS]   LocalAggregate → GlobalAggregate
//	windowagg window=(tumble|hop|cumulate) size=MS [slide=MS] [step=MS] [offset=MS] time=F keys=(…) aggs=(…) [window-time]
//	dedup keys=(…) [last] [rowtime time=F] [no-update-before] [ttl=MS]
//	topn keys=(…) order=(F[:desc][:nulls-first|:nulls-last],…) n=N [rank] [insert-only] [ttl=MS]
//	windowrank WIN keys=(…) order=(…) ranks=(M,N) [rank]
//	windowdedup WIN keys=(…) by=F [last]
//	    WIN is window=(tumble|hop|cumulate) size=MS [slide=MS] [step=MS] time=F
//	    (windows assigned from rowtime field F, appended to the row) or
//	    wstart=F wend=F (the row carries its window)
//	join type=(inner|left|right|full) lkeys=(…) rkeys=(…) larity=N rarity=N [cond=lF<rG] [ttl=MS]
//	sinkmaterializer pk=(…) [ttl=MS]
//	intervaljoin type=… lkeys=(…) rkeys=(…) ltime=F rtime=F lower=MS upper=MS larity=N rarity=N
//	overagg keys=(…) [rowtime time=F] [rows] [preceding=N] aggs=(…)
//	    OVER (PARTITION BY keys ORDER BY rowtime field F, else proctime
//	    ROWS|RANGE BETWEEN N (rows, or ms) PRECEDING AND CURRENT ROW;
//	    without preceding UNBOUNDED PRECEDING)
//	    new operator; aggregate kinds: count, sum, min, max, avg, first, last,
//	    arg * (COUNT(*)) or a field, "distinct" between them (count:distinct:1)
//	in [side=2]      one row a line: "+I[a, 1]" [@ts]; prints the output
//	watermark TS     prints the output
//	finish           end of input (Finish on every stage)
//	restart          checkpoint, write, restore into new operators, open
//	time MS [busy]   set the processing-time clock (state TTL) and run the
//	                 processing-time callbacks due, as a subtask's wake-up
//	                 does (mini-batch allow-latency); prints the output.
//	                 busy: only set the clock (the wake-up has not come yet)
//	table [key=(…)]  the materialised output so far
//	metrics          late-dropped and filtered counts, registered timers
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		s := &script{}
		datadriven.RunTest(t, path, s.run)
	})
}

type script struct {
	mk    []newStage
	c     *chain
	clock int64
	ckpt  event.CheckpointID
}

func (s *script) run(t *testing.T, td *datadriven.TestData) string {
	if mk := newOperator(t, td); mk != nil {
		s.mk, s.clock = mk, 0
		s.c = openChain(t, s.mk, &s.clock, nil)
		return "ok\n"
	}
	switch td.Cmd {
	case "in":
		input := 1
		td.MaybeScanArgs(t, "side", &input)
		for _, line := range strings.Split(strings.TrimSpace(td.Input), "\n") {
			rec := parseRecord(t, td, line)
			if err := s.c.process(t, input, rec); err != nil {
				s.c.out.lines = append(s.c.out.lines, "error: "+err.Error())
			}
		}
	case "watermark":
		s.c.watermark(t, parseInt(t, td, td.CmdArgs[0].Key))
	case "finish":
		s.c.finish(t)
	case "restart":
		s.ckpt++
		parts := s.c.snapshot(t, s.ckpt)
		old := s.c
		s.c = openChain(t, s.mk, &s.clock, parts)
		s.c.out.records = old.out.records // keep the history for "table"
		s.c.out.lines = old.out.take()
	case "time":
		now := parseInt(t, td, td.CmdArgs[0].Key)
		if td.HasArg("busy") {
			s.clock = now
			break
		}
		s.c.advance(t, now)
	case "table":
		return s.table(t, td)
	case "metrics":
		m := s.c.stages[len(s.c.stages)-1].ctx
		return fmt.Sprintf("late-dropped=%d filtered=%d timers=%d\n", m.Metrics.LateDropped, m.Metrics.Filtered, timers(s.c))
	default:
		td.Fatalf(t, "unknown command %q", td.Cmd)
	}
	lines := s.c.out.take()
	if len(lines) == 0 {
		return "(nothing)\n"
	}
	return strings.Join(lines, "\n") + "\n"
}

func timers(c *chain) int {
	n := 0
	for _, s := range c.stages {
		if s.ctx.Timers != nil {
			n += s.ctx.Timers.Len()
		}
	}
	return n
}

func (s *script) table(t *testing.T, td *datadriven.TestData) string {
	tab, err := Materialize(s.c.out.rows(), intsArg(t, td, "key"))
	var lines []string
	for _, row := range tab {
		lines = append(lines, formatFields(row))
	}
	sort.Strings(lines)
	if err != nil {
		lines = append(lines, "error: "+err.Error())
	}
	if len(lines) == 0 {
		return "(empty)\n"
	}
	return strings.Join(lines, "\n") + "\n"
}

func parseRecord(t *testing.T, td *datadriven.TestData, line string) event.Record {
	ts := event.NoTimestamp
	if body, at, ok := strings.Cut(line, " @"); ok {
		line, ts = body, parseInt(t, td, at)
	}
	r, err := parseRow(line)
	if err != nil {
		td.Fatalf(t, "%v", err)
	}
	return event.Record{Value: r, Timestamp: ts}
}

func parseInt(t *testing.T, td *datadriven.TestData, s string) int64 {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		td.Fatalf(t, "bad number %q", s)
	}
	return n
}

func intsArg(t *testing.T, td *datadriven.TestData, key string) []int {
	arg, ok := td.Arg(key)
	if !ok {
		return nil
	}
	var out []int
	for _, v := range arg.Vals {
		if v == "" {
			continue // keys=()
		}
		out = append(out, int(parseInt(t, td, v)))
	}
	return out
}

func intArg(t *testing.T, td *datadriven.TestData, key string) int {
	var n int
	td.MaybeScanArgs(t, key, &n)
	return n
}

func msArg(t *testing.T, td *datadriven.TestData, key string) time.Duration {
	var n int64
	td.MaybeScanArgs(t, key, &n)
	return time.Duration(n) * time.Millisecond
}

func aggsArg(t *testing.T, td *datadriven.TestData) []AggCall {
	kinds := map[string]AggKind{"count": Count, "sum": Sum, "min": Min, "max": Max, "avg": Avg,
		"first": FirstValue, "last": LastValue, "collect": Collect}
	arg, _ := td.Arg("aggs")
	var out []AggCall
	for _, v := range arg.Vals {
		parts := strings.Split(v, ":")
		c := AggCall{Kind: kinds[parts[0]]}
		if len(parts) == 3 && parts[1] == "distinct" {
			c.Distinct, parts = true, []string{parts[0], parts[2]}
		}
		if _, ok := kinds[parts[0]]; !ok || len(parts) != 2 {
			td.Fatalf(t, "bad aggregate %q", v)
		}
		if parts[1] == "*" {
			c.Kind = CountStar
		} else {
			c.Arg = int(parseInt(t, td, parts[1]))
		}
		out = append(out, c)
	}
	return out
}

// newOperator returns the stages of the operator command td, nil when td
// is no such command.
func newOperator(t *testing.T, td *datadriven.TestData) []newStage {
	keyed := func(f func() (operator.Operator, error)) []newStage {
		return []newStage{func() (operator.Operator, bool) {
			op, err := f()
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			return op, true
		}}
	}
	switch td.Cmd {
	case "groupagg":
		opts := groupAggArgs(t, td)
		return keyed(func() (operator.Operator, error) { return NewGroupAggregate(opts) })
	case "local-global":
		return localGlobal(t, td)
	case "windowagg":
		opts := windowAggArgs(t, td)
		return keyed(func() (operator.Operator, error) { return NewWindowAggregate(opts) })
	case "dedup":
		opts := DedupOptions{PartitionKeys: intsArg(t, td, "keys"), KeepLast: td.HasArg("last"),
			RowTime: td.HasArg("rowtime"), TimeField: intArg(t, td, "time"),
			NoUpdateBefore: td.HasArg("no-update-before"), StateTTL: msArg(t, td, "ttl")}
		return keyed(func() (operator.Operator, error) { return NewDeduplicate(opts) })
	case "topn":
		opts := topNArgs(t, td)
		return keyed(func() (operator.Operator, error) { return NewTopN(opts) })
	case "windowrank":
		ranks := intsArg(t, td, "ranks")
		if len(ranks) != 2 {
			td.Fatalf(t, "windowrank needs ranks=(M,N)")
		}
		opts := WindowRankOptions{Window: windowRowsArgs(t, td), PartitionKeys: intsArg(t, td, "keys"),
			OrderBy: topNArgs(t, td).OrderBy, RankStart: ranks[0], RankEnd: ranks[1], RankNumber: td.HasArg("rank")}
		return keyed(func() (operator.Operator, error) { return NewWindowRank(opts) })
	case "windowdedup":
		opts := WindowDedupOptions{Window: windowRowsArgs(t, td), PartitionKeys: intsArg(t, td, "keys"),
			TimeField: intArg(t, td, "by"), KeepLast: td.HasArg("last")}
		return keyed(func() (operator.Operator, error) { return NewWindowDeduplicate(opts) })
	case "join":
		opts := joinArgs(t, td)
		return keyed(func() (operator.Operator, error) { return NewJoin(opts) })
	case "semijoin":
		opts := semiJoinArgs(t, td)
		return keyed(func() (operator.Operator, error) { return NewSemiJoin(opts) })
	case "sinkmaterializer":
		opts := SinkMaterializerOptions{PrimaryKey: intsArg(t, td, "pk"), StateTTL: msArg(t, td, "ttl")}
		return keyed(func() (operator.Operator, error) { return NewSinkUpsertMaterializer(opts) })
	case "intervaljoin":
		j := joinArgs(t, td)
		opts := IntervalJoinOptions{Type: j.Type, LeftKeys: j.LeftKeys, RightKeys: j.RightKeys,
			LeftTime: intArg(t, td, "ltime"), RightTime: intArg(t, td, "rtime"),
			Lower: msArg(t, td, "lower"), Upper: msArg(t, td, "upper"),
			LeftArity: j.LeftArity, RightArity: j.RightArity, Condition: j.Condition}
		return keyed(func() (operator.Operator, error) { return NewIntervalJoin(opts) })
	case "overagg":
		opts := overAggArgs(t, td)
		return keyed(func() (operator.Operator, error) { return NewOverAggregate(opts) })
	}
	return nil
}

func overAggArgs(t *testing.T, td *datadriven.TestData) OverAggOptions {
	opts := OverAggOptions{PartitionKeys: intsArg(t, td, "keys"), RowTime: td.HasArg("rowtime"),
		TimeField: intArg(t, td, "time"), Rows: td.HasArg("rows"), Preceding: -1, Aggs: aggsArg(t, td)}
	td.MaybeScanArgs(t, "preceding", &opts.Preceding)
	return opts
}

func groupAggArgs(t *testing.T, td *datadriven.TestData) GroupAggOptions {
	return GroupAggOptions{GroupKeys: intsArg(t, td, "keys"), Aggs: aggsArg(t, td),
		InputInsertOnly: td.HasArg("insert-only"), NoUpdateBefore: td.HasArg("no-update-before"),
		EmitUnchanged: td.HasArg("emit-unchanged"), StateTTL: msArg(t, td, "ttl"),
		MiniBatchSize: intArg(t, td, "batch"), MiniBatchLatency: msArg(t, td, "latency")}
}

func localGlobal(t *testing.T, td *datadriven.TestData) []newStage {
	opts := groupAggArgs(t, td)
	local := LocalAggOptions{Agg: opts, BatchSize: opts.MiniBatchSize, Latency: opts.MiniBatchLatency}
	opts.MiniBatchSize, opts.MiniBatchLatency = 0, 0 // batch and latency are the local phase's here
	return []newStage{
		func() (operator.Operator, bool) {
			op, err := NewLocalAggregate(local)
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			return op, false
		},
		func() (operator.Operator, bool) {
			op, err := NewGlobalAggregate(opts)
			if err != nil {
				td.Fatalf(t, "%v", err)
			}
			return op, true
		},
	}
}

func windowAggArgs(t *testing.T, td *datadriven.TestData) WindowAggOptions {
	var kind string
	td.ScanArgs(t, "window", &kind)
	kinds := map[string]WindowKind{"tumble": Tumble, "hop": Hop, "cumulate": Cumulate}
	k, ok := kinds[kind]
	if !ok {
		td.Fatalf(t, "unknown window %q", kind)
	}
	return WindowAggOptions{
		Window: WindowSpec{Kind: k, Size: msArg(t, td, "size"), Slide: msArg(t, td, "slide"),
			Step: msArg(t, td, "step"), Offset: msArg(t, td, "offset")},
		TimeField: intArg(t, td, "time"), GroupKeys: intsArg(t, td, "keys"), Aggs: aggsArg(t, td),
		WindowTime: td.HasArg("window-time"),
	}
}

// windowRowsArgs reads WIN of windowrank and windowdedup.
func windowRowsArgs(t *testing.T, td *datadriven.TestData) WindowRows {
	if !td.HasArg("window") {
		return WindowRows{Start: intArg(t, td, "wstart"), End: intArg(t, td, "wend")}
	}
	spec := windowAggArgs(t, td).Window
	return WindowRows{Assign: &spec, TimeField: intArg(t, td, "time")}
}

func topNArgs(t *testing.T, td *datadriven.TestData) TopNOptions {
	arg, _ := td.Arg("order")
	var order []SortKey
	for _, v := range arg.Vals {
		parts := strings.Split(v, ":")
		k := SortKey{Field: int(parseInt(t, td, parts[0]))}
		for _, p := range parts[1:] {
			switch p {
			case "asc":
			case "desc":
				k.Desc = true
			case "nulls-first":
				k.Nulls = NullsFirst
			case "nulls-last":
				k.Nulls = NullsLast
			default:
				td.Fatalf(t, "bad sort key %q", v)
			}
		}
		order = append(order, k)
	}
	return TopNOptions{PartitionKeys: intsArg(t, td, "keys"), OrderBy: order, N: intArg(t, td, "n"),
		RankNumber: td.HasArg("rank"), InputInsertOnly: td.HasArg("insert-only"), StateTTL: msArg(t, td, "ttl")}
}

func joinArgs(t *testing.T, td *datadriven.TestData) JoinOptions {
	var typ string
	td.ScanArgs(t, "type", &typ)
	types := map[string]JoinType{"inner": InnerJoin, "left": LeftJoin, "right": RightJoin, "full": FullJoin}
	jt, ok := types[typ]
	if !ok {
		td.Fatalf(t, "unknown join type %q", typ)
	}
	opts := JoinOptions{Type: jt, LeftKeys: intsArg(t, td, "lkeys"), RightKeys: intsArg(t, td, "rkeys"),
		LeftArity: intArg(t, td, "larity"), RightArity: intArg(t, td, "rarity"), StateTTL: msArg(t, td, "ttl")}
	var cond string
	if td.MaybeScanArgs(t, "cond", &cond) {
		opts.Condition = parseCondition(t, td, cond)
	}
	return opts
}

func semiJoinArgs(t *testing.T, td *datadriven.TestData) SemiJoinOptions {
	var mode string
	td.ScanArgs(t, "mode", &mode)
	modes := map[string]SemiJoinMode{"semi": Semi, "anti": Anti, "scalar": Scalar}
	m, ok := modes[mode]
	if !ok {
		td.Fatalf(t, "unknown semi join mode %q", mode)
	}
	opts := SemiJoinOptions{Mode: m, LeftKeys: intsArg(t, td, "lkeys"), RightKeys: intsArg(t, td, "rkeys"),
		LeftWidth: intArg(t, td, "lwidth"), RightArity: intArg(t, td, "rarity"), StateTTL: msArg(t, td, "ttl")}
	var cond string
	if td.MaybeScanArgs(t, "cond", &cond) {
		opts.Condition = parseCondition(t, td, cond)
	}
	return opts
}

// parseCondition parses "lF<rG": left field F less than right field G.
func parseCondition(t *testing.T, td *datadriven.TestData, s string) func(l, r []any) (bool, error) {
	a, b, ok := strings.Cut(s, "<")
	if !ok || !strings.HasPrefix(a, "l") || !strings.HasPrefix(b, "r") {
		td.Fatalf(t, "bad condition %q; want lF<rG", s)
	}
	lf, rf := int(parseInt(t, td, a[1:])), int(parseInt(t, td, b[1:]))
	return func(l, r []any) (bool, error) {
		if l[lf] == nil || r[rf] == nil {
			return false, nil
		}
		return compareValues(l[lf], r[rf]) < 0, nil
	}
}
