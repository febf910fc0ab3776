package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/types"
)

// DefaultMaxFutureSkew is the default of 'table.exec.source.max-future-skew':
// a record stamped more than a day past the wall clock does not move its
// source's watermark (watermark.FutureSkewGuard), and is logged. The guard
// measures against the wall clock, so replaying old data is unaffected;
// a day is generous enough for producers' clock drift and for TIMESTAMP
// columns holding local time of any time zone (at most 14 h ahead of UTC),
// and still catches a corrupt or wrongly scaled timestamp (years ahead)
// before it makes every on-time record late.
const DefaultMaxFutureSkew = 24 * time.Hour

// Config holds the settings the planner reads (from SET statements).
type Config struct {
	// Parallelism is parallelism.default. Default 1.
	Parallelism int
	// StateTTL is table.exec.state.ttl. Default 0: state kept forever.
	StateTTL time.Duration
	// IdleTimeout is table.exec.source.idle-timeout. Default 0: off.
	IdleTimeout time.Duration
	// MaxFutureSkew is Weir's table.exec.source.max-future-skew (0: off;
	// a session's default is DefaultMaxFutureSkew).
	MaxFutureSkew time.Duration
	// Now is the clock of CURRENT_TIMESTAMP and friends. Default: the
	// wall clock (time.Now), except that PROCTIME(), CURRENT_TIMESTAMP,
	// NOW() and CURRENT_ROW_TIMESTAMP() as a projection's column, as they
	// are, are the job's processing time (runtime.Options.Now, the clock
	// its processing-time windows and timers read; the wall clock unless
	// a test or simulation sets one; see exec.Calc.Now).
	Now func() time.Time
	// Location is table.local-time-zone: the zone TIMESTAMP_LTZ values
	// show and convert in, CURRENT_TIMESTAMP's and windows' over a
	// TIMESTAMP_LTZ rowtime. Default (nil): UTC.
	Location *time.Location
	// Functions are user-defined scalar functions by upper-case name (what
	// CREATE FUNCTION would register). Default none.
	Functions map[string]*expr.Function
	// MiniBatchSize and MiniBatchLatency are Flink's
	// table.exec.mini-batch.size and …allow-latency, for group
	// aggregations (see exec.GroupAggOptions). Default 0: no mini-batches
	// (table.exec.mini-batch.enabled = false).
	MiniBatchSize    int
	MiniBatchLatency time.Duration
	// AggPhase is table.optimizer.agg-phase-strategy: whether a group
	// aggregation may run in two phases when mini-batches are on (see
	// twophase.go). Default AggPhaseAuto.
	AggPhase AggPhaseStrategy
	// UpsertMaterialize is table.exec.sink.upsert-materialize and
	// KeyedShuffle table.exec.sink.keyed-shuffle: whether a sink with a
	// PRIMARY KEY gets a SinkMaterializer and a hash exchange by its key
	// in front (see sinkkey.go). Default SinkAuto.
	UpsertMaterialize SinkMode
	KeyedShuffle      SinkMode
}

// AggPhaseStrategy is Flink's table.optimizer.agg-phase-strategy.
type AggPhaseStrategy uint8

const (
	// AggPhaseAuto (AUTO, Flink's default) plans a group aggregation in two
	// phases when mini-batches are on and every aggregate call can merge
	// partial accumulators; otherwise in one.
	AggPhaseAuto AggPhaseStrategy = iota
	// AggPhaseOne (ONE_PHASE) always plans one GroupAggregate.
	AggPhaseOne
	// AggPhaseTwo (TWO_PHASE) asks for two phases. In a streaming job it
	// decides as AUTO does: two phases need mini-batches and mergeable
	// calls, and without them the aggregation runs in one phase (Flink's
	// TwoStageOptimizedAggregateRule only tests for "not ONE_PHASE").
	AggPhaseTwo
)

var aggPhaseNames = [...]string{"AUTO", "ONE_PHASE", "TWO_PHASE"}

// String is the strategy as table.optimizer.agg-phase-strategy spells it:
// AUTO, ONE_PHASE or TWO_PHASE.
func (s AggPhaseStrategy) String() string {
	if int(s) < len(aggPhaseNames) {
		return aggPhaseNames[s]
	}
	return fmt.Sprintf("AggPhaseStrategy(%d)", uint8(s))
}

// ParseAggPhaseStrategy reads AUTO, ONE_PHASE or TWO_PHASE (any case).
func ParseAggPhaseStrategy(s string) (AggPhaseStrategy, error) {
	for i, n := range aggPhaseNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return AggPhaseStrategy(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not an aggregation phase strategy; use AUTO, ONE_PHASE or TWO_PHASE", s)
}

// Planner plans queries of one session.
type Planner struct {
	Catalog    *catalog.Catalog
	Connectors *Connectors
	Config     Config
	ctes       []map[string]*parser.Query
	// aggInput is the input of the aggregation being planned, for type
	// checks and error messages.
	aggInput []expr.Column
	// valuesTarget are the sink's column types while the VALUES of an
	// INSERT is planned (see planInsertValues).
	valuesTarget []types.Type
	// needs is what the query block being planned can read, for column
	// pruning (prune.go); nil outside a block.
	needs *colNeeds
	// stmt is what the query being planned names (or the job's INSERTs,
	// planned together by PlanInserts; the views they read aside), for
	// pruning a window TVF's table (prunedTVFInput); nil: unknown.
	stmt *parser.Names
}

// Error is a planning error at a position of the SQL text: the one
// positional SQL error type, parser.Error, with no Class.
type Error = parser.Error

func errAt(pos parser.Pos, format string, args ...any) error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// scope builds an expression scope over cols.
func (p *Planner) scope(cols []expr.Column) *expr.Scope {
	return &expr.Scope{Columns: cols, Now: p.Config.Now, Functions: p.Config.Functions, Location: p.Config.Location}
}

// Plan plans a query.
func (p *Planner) Plan(q *parser.Query) (*Rel, error) {
	defer p.withStatement(q)()
	if len(q.With) > 0 {
		m := map[string]*parser.Query{}
		for _, c := range q.With {
			m[c.Name] = c.Query
		}
		p.ctes = append(p.ctes, m)
		defer func() { p.ctes = p.ctes[:len(p.ctes)-1] }()
	}
	if len(q.OrderBy) > 0 || q.Limit != nil {
		return nil, errAt(q.Pos, "ORDER BY and LIMIT on an unbounded stream are not supported")
	}
	return p.planBody(q.Body)
}

func (p *Planner) planBody(b parser.QueryBody) (*Rel, error) {
	switch b := b.(type) {
	case *parser.Select:
		return p.planSelect(b)
	case *parser.SetOp:
		return p.planSetOp(b)
	case *parser.Query:
		return p.Plan(b)
	case *parser.Values:
		return p.planValues(b)
	}
	return nil, errAt(b.Position(), "this form of query is not supported")
}

func (p *Planner) cte(name string) *parser.Query {
	for i := len(p.ctes) - 1; i >= 0; i-- {
		if q, ok := p.ctes[i][name]; ok {
			return q
		}
	}
	return nil
}

// Build turns sink plans into a stream graph named jobName.
func (p *Planner) Build(jobName string, sinks []*Rel) (*graph.StreamGraph, error) {
	par := p.Config.Parallelism
	if par < 1 {
		par = 1
	}
	b := &builder{g: &graph.StreamGraph{JobName: jobName}, parallelism: par}
	for _, s := range sinks {
		b.countReuse(s)
	}
	for _, s := range sinks {
		if _, err := b.build(s); err != nil {
			return nil, err
		}
	}
	return b.g, nil
}

// ViewColumns plans view name and returns its columns and the index of
// its event-time attribute (-1: none): what DESCRIBE shows of a view.
func (p *Planner) ViewColumns(name parser.Name) ([]expr.Column, int, error) {
	r, err := p.planTableName(&parser.TableName{Name: name})
	if err != nil {
		return nil, -1, err
	}
	return r.Cols, r.RowTime, nil
}
