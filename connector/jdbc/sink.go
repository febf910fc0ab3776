package jdbc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/weirstream/weir/delivery"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// Sink writes event.Row values into one table of MySQL/MariaDB or
// PostgreSQL. It is an operator.Sink: pass it to weir.SinkTo. One Sink may
// serve every subtask of the sink operator; they share one connection pool,
// opened by the first writer or committer and closed with the last.
type Sink struct {
	opts   Options
	target target
	hooks  hooks
	// identityWait overrides identityWait (tests).
	identityWait time.Duration
	mu           struct {
		sync.Mutex
		pool  pool
		table *tableInfo
		refs  int
		links map[int]*xaLink // by subtask index
	}
}

// hooks let tests crash the sink at named points and kill its connections.
// Production code leaves them nil.
type hooks struct {
	// fault may fail at "prepare" (after XA PREPARE, before the committable
	// is handed over), "commit" (before a committable is committed) and
	// "after-commit" (after the commit, before Commit returns).
	fault func(point string) error
	// conn is told the server id of the connection in use at "xa-write"
	// (rows written into an open XA transaction), "xa-commit" (before XA
	// COMMIT), "wal-apply" (checkpoint
	// rows written, before COMMIT) and "flush" (at-least-once, before COMMIT).
	conn func(point string, connID int64)
}

func (h *hooks) maybe(point string) error {
	if h.fault == nil {
		return nil
	}
	return h.fault(point)
}

func (h *hooks) onConn(ctx context.Context, point string, s session) {
	if h.conn == nil {
		return
	}
	if id, err := s.id(ctx); err == nil {
		h.conn(point, id)
	}
}

// New returns a sink configured by opts; it does not connect yet.
func New(opts ...Opt) (*Sink, error) {
	o := DefaultOptions()
	for _, opt := range opts {
		opt.apply(&o)
	}
	o.EnsureDefaults()
	if err := o.Validate(); err != nil {
		return nil, err
	}
	t, err := parseTarget(o.URL, o.Username, o.Password)
	if err != nil {
		return nil, fmt.Errorf("jdbc: sink for table %q: %w", o.Table, err)
	}
	return &Sink{opts: o, target: t}, nil
}

// FromMap returns a sink configured by Flink option names (see
// ParseOptions), then by opts (the SQL layer passes the table's columns and
// primary key this way).
func FromMap(m map[string]string, opts ...Opt) (*Sink, error) {
	o, err := ParseOptions(m)
	if err != nil {
		return nil, err
	}
	return New(append([]Opt{WithOptions(o)}, opts...)...)
}

// Options returns the sink's options, defaults filled.
func (s *Sink) Options() Options { return s.opts }

// Dialect names the database: "MySQL" (MariaDB too) or "PostgreSQL".
func (s *Sink) Dialect() string { return s.target.dialect.name() }

// acquire opens the pool and reads the table on first use, and counts the
// user; every acquire is paired with a release. The pool's sessions wait
// lockWait at most for a row lock (see Options.LockWaitTimeout).
func (s *Sink) acquire(ctx context.Context, lockWait time.Duration) (pool, *tableInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.pool == nil {
		p, t, err := s.openLocked(ctx, lockWait)
		if err != nil {
			return nil, nil, err
		}
		s.mu.pool, s.mu.table = p, t
	}
	s.mu.refs++
	return s.mu.pool, s.mu.table, nil
}

func (s *Sink) openLocked(ctx context.Context, lockWait time.Duration) (pool, *tableInfo, error) {
	d := s.target.dialect
	p, err := d.open(s.target.withLockWait(lockWait))
	if err != nil {
		return nil, nil, fmt.Errorf("jdbc: sink for table %q: %w", s.opts.Table, err)
	}
	sess, err := p.acquire(ctx)
	if err != nil {
		_ = p.close()
		return nil, nil, d.explainConnect(fmt.Errorf("jdbc: sink for table %q: connecting to %s at %s (the table's 'url' option): %w; "+
			"the job restarts from its last checkpoint and connects again as its restart strategy says (restart-strategy.type; "+
			"the default, exponential-delay, retries without limit, as Flink's): check the host and port in 'url'",
			s.opts.Table, d.name(), s.target.address(), err))
	}
	t, err := loadTable(ctx, d, sess, &s.opts)
	if err == nil && s.opts.Guarantee == delivery.ExactlyOnce {
		err = createBookkeeping(ctx, d, sess, &s.opts)
	}
	sess.release(err != nil)
	if err != nil {
		_ = p.close()
		return nil, nil, err
	}
	return p, t, nil
}

// createBookkeeping creates the bookkeeping tables unless they exist. It
// looks first: DDL on an existing table may wait for the locks of prepared
// transactions, which only this sink's committer would end. Two sinks
// racing to create them in PostgreSQL may see a duplicate catalog entry:
// then the other one won.
func createBookkeeping(ctx context.Context, d dialect, s session, o *Options) error {
	for tbl, ddl := range map[string][]string{o.XALogTable: d.createXALog(o.XALogTable),
		o.CheckpointTable: d.createCheckpoints(o.CheckpointTable)} {
		ok, err := d.exists(ctx, s, tbl)
		if err != nil {
			return fmt.Errorf("jdbc: looking for the bookkeeping table %s: %w", tbl, err)
		}
		if ok {
			continue
		}
		for _, q := range ddl {
			if _, err := s.exec(ctx, q); err != nil && pgCode(err) != "23505" && pgCode(err) != "42P07" {
				return fmt.Errorf("jdbc: creating the bookkeeping table %s: %w", tbl, err)
			}
		}
	}
	return nil
}

func (s *Sink) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.refs--; s.mu.refs == 0 {
		_ = s.mu.pool.close()
		s.mu.pool, s.mu.table = nil, nil
	}
}

// link returns the xaLink of a subtask index, shared by its writer and
// committer.
func (s *Sink) link(subtask int) *xaLink {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.links == nil {
		s.mu.links = map[int]*xaLink{}
	}
	if s.mu.links[subtask] == nil {
		s.mu.links[subtask] = &xaLink{pending: map[string]*heldSession{}}
	}
	return s.mu.links[subtask]
}

// strategy resolves StrategyAuto for table t.
func (s *Sink) strategy(t *tableInfo) Strategy {
	if s.opts.Strategy != StrategyAuto {
		return s.opts.Strategy
	}
	if t.isAppend() {
		return StrategyXA
	}
	return StrategyCheckpointTable
}

// CreateWriter implements operator.Sink.
func (s *Sink) CreateWriter(wctx operator.WriterContext) (operator.SinkWriter, error) {
	ctx := contextOf(wctx)
	p, t, err := s.acquire(ctx, s.lockWait(wctx))
	if err != nil {
		return nil, err
	}
	if s.opts.Guarantee != delivery.ExactlyOnce {
		return s.newDirectWriter(ctx, wctx, p, t), nil
	}
	if wctx.JobID == "" {
		s.release()
		return nil, errors.New("jdbc: exactly-once needs the job id (runtime.Options.JobID)")
	}
	lease, err := s.takeIdentity(ctx, wctx, p)
	if err != nil {
		s.release()
		return nil, err
	}
	var w operator.SinkWriter
	if s.strategy(t) == StrategyXA {
		w, err = s.newXAWriter(ctx, wctx, p, t, lease)
	} else {
		w, err = s.newWALWriter(ctx, wctx, p, t, lease)
	}
	if err != nil {
		lease.release()
		s.release()
		return nil, err
	}
	return w, nil
}

// CreateCommitter implements operator.Sink: nil unless exactly-once.
func (s *Sink) CreateCommitter(wctx operator.WriterContext) (operator.Committer, error) {
	if s.opts.Guarantee != delivery.ExactlyOnce {
		return nil, nil
	}
	if wctx.JobID == "" {
		return nil, errors.New("jdbc: exactly-once needs the job id (runtime.Options.JobID)")
	}
	ctx := contextOf(wctx)
	p, t, err := s.acquire(ctx, s.lockWait(wctx))
	if err != nil {
		return nil, err
	}
	c := committerBase{s: s, p: p, t: t, job: wctx.JobID}
	if s.strategy(t) == StrategyXA {
		return &xaCommitter{committerBase: c, prefix: xidPrefix(wctx.JobID, s.opts.Name),
			link: s.link(wctx.Subtask.Index)}, nil
	}
	return &walCommitter{committerBase: c}, nil
}

func contextOf(w operator.WriterContext) context.Context {
	if w.Context != nil {
		return w.Context
	}
	return context.Background()
}

// rowOf takes the row out of a stream value.
func (s *Sink) rowOf(t *tableInfo, v any) (event.Row, error) {
	var r event.Row
	switch v := v.(type) {
	case event.Row:
		r = v
	case *event.Row:
		r = *v
	default:
		if s.opts.Converter == nil {
			return r, fmt.Errorf("jdbc: sink for table %q got a %T; it takes event.Row values "+
				"(or set a converter: StructRows, RowsOf)", t.name, v)
		}
		var err error
		if r, err = s.opts.Converter(v); err != nil {
			return r, fmt.Errorf("jdbc: sink for table %q: converting a %T to a row: %w", t.name, v, err)
		}
	}
	return r, t.check(r)
}

// committerBase is what both committers share.
type committerBase struct {
	s   *Sink
	p   pool
	t   *tableInfo
	job string
}

func (c *committerBase) Close() error { c.s.release(); return nil }

func (c *committerBase) log(msg string, args ...any) { c.s.opts.Logger.Warn(msg, args...) }

// inLocalTx runs fn in a READ COMMITTED transaction on a fresh session and
// commits; hook is told the connection before COMMIT. On any error the
// session is discarded, which rolls the transaction back.
func inLocalTx(ctx context.Context, s *Sink, p pool, hook string, fn func(session) error) error {
	sess, err := p.acquire(ctx)
	if err != nil {
		return err
	}
	d := s.target.dialect
	err = execAll(ctx, sess, d.begin())
	if err == nil {
		err = fn(sess)
	}
	if err == nil {
		s.hooks.onConn(ctx, hook, sess)
		_, err = sess.exec(ctx, "COMMIT")
	}
	sess.release(err != nil)
	return err
}
