package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// Result modes, Flink's sql-client.execution.result-mode.
const (
	keyResultMode = "sql-client.execution.result-mode"
	modeTable     = "table"
	modeChangelog = "changelog"
	modeTableau   = "tableau"
)

// collectSink hands a SELECT's rows to the shell: each writer sends its
// rows on one channel, waiting while the shell is behind (the job is
// back-pressured by the screen), until the job or the shell stops.
type collectSink struct {
	rows chan event.Row
	stop chan struct{} // closed when the shell stops reading
}

func newCollectSink() *collectSink {
	return &collectSink{rows: make(chan event.Row, 256), stop: make(chan struct{})}
}

// CreateWriter implements operator.Sink.
func (s *collectSink) CreateWriter(ctx operator.WriterContext) (operator.SinkWriter, error) {
	c := ctx.Context
	if c == nil {
		c = context.Background()
	}
	return &collectWriter{s: s, ctx: c}, nil
}

// CreateCommitter implements operator.Sink: a shown result has no commit.
func (s *collectSink) CreateCommitter(operator.WriterContext) (operator.Committer, error) {
	return nil, nil
}

type collectWriter struct {
	s   *collectSink
	ctx context.Context
}

func (w *collectWriter) Write(rec event.Record) error {
	r, ok := rec.Value.(event.Row)
	if !ok {
		return fmt.Errorf("sql client: the result holds a %T, not a row", rec.Value)
	}
	r.Fields = slices.Clone(r.Fields) // operators may reuse the slice
	select {
	case w.s.rows <- r:
		return nil
	case <-w.s.stop:
		return context.Canceled
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

func (w *collectWriter) Flush(bool) error                                   { return nil }
func (w *collectWriter) PrepareCommit(event.CheckpointID) ([][]byte, error) { return nil, nil }
func (w *collectWriter) SnapshotState(event.CheckpointID) ([]byte, error)   { return nil, nil }
func (w *collectWriter) Close() error                                       { return nil }

// status is how a shown result stands.
type status int

const (
	running status = iota
	finished
	cancelled
)

// materialized is table mode's view of a result: the rows of the table
// the changelog describes, each -U/-D applied by removing the last equal
// row, and a +U right after a -U put where the retracted row was, so an
// updated row changes in place.
type materialized struct {
	cols    []types.Field
	loc     *time.Location // the session zone, for TIMESTAMP_LTZ
	rows    [][]string
	pending int // where the last -U removed a row; -1: none
}

func (m *materialized) apply(r event.Row) {
	cs := cells(r, m.cols, false, m.loc)
	switch r.Kind {
	case event.Insert:
		m.rows, m.pending = append(m.rows, cs), -1
	case event.UpdateAfter:
		if m.pending >= 0 && m.pending <= len(m.rows) {
			m.rows = slices.Insert(m.rows, m.pending, cs)
		} else {
			m.rows = append(m.rows, cs)
		}
		m.pending = -1
	case event.UpdateBefore, event.Delete:
		m.pending = -1
		for i := len(m.rows) - 1; i >= 0; i-- {
			if slices.Equal(m.rows[i], cs) {
				m.rows = slices.Delete(m.rows, i, i+1)
				if r.Kind == event.UpdateBefore {
					m.pending = i
				}
				break
			}
		}
	}
}

// changelogKeep bounds the rows changelog mode keeps: it shows the newest
// that fit the screen, and counts the rest.
const changelogKeep = 1000

// frameView is the live view of table and changelog modes: a frame drawn
// again in place as rows arrive.
type frameView struct {
	mode     string
	cols     []types.Field
	loc      *time.Location
	table    *materialized // table mode
	log      [][]string    // changelog mode: the newest rows, with op
	received int
}

func newFrameView(mode string, cols []types.Field, loc *time.Location) *frameView {
	v := &frameView{mode: mode, cols: cols, loc: loc}
	if mode == modeTable {
		v.table = &materialized{cols: cols, loc: loc, pending: -1}
	}
	return v
}

func (v *frameView) add(r event.Row) {
	v.received++
	if v.table != nil {
		v.table.apply(r)
		return
	}
	v.log = append(v.log, cells(r, v.cols, true, v.loc))
	if len(v.log) > 2*changelogKeep {
		v.log = slices.Clone(v.log[len(v.log)-changelogKeep:])
	}
}

// frame renders the view in at most height lines (0: no limit), as
// Flink's result views: a title, the rows in a box, and a status line.
// Table mode shows the first rows that fit, changelog mode the newest.
func (v *frameView) frame(st status, height int) []string {
	title, rows := "SQL Query Result (Changelog)", v.log
	b := streamBox(v.cols, v.table == nil)
	if v.table != nil {
		title, rows = "SQL Query Result (Table)", v.table.rows
	}
	shown := rows
	if room := height - 6; height > 0 && len(rows) > max(room, 1) {
		if v.table != nil {
			shown = rows[:max(room, 1)]
		} else {
			shown = rows[len(rows)-max(room, 1):]
		}
	}
	lines := append([]string{title}, b.header()...)
	for _, r := range shown {
		lines = append(lines, b.line(r))
	}
	return append(lines, b.border(), v.statusLine(st, len(rows), len(shown)))
}

func (v *frameView) statusLine(st status, total, shown int) string {
	parts := []string{[]string{"Running", "Finished", "Cancelled"}[st]}
	if v.table != nil {
		parts = append(parts, plural(total, "row"))
	}
	parts = append(parts, plural(v.received, "change")+" received")
	if shown < total {
		which := "first"
		if v.table == nil {
			which = "newest"
		}
		parts = append(parts, fmt.Sprintf("showing the %s %d", which, shown))
	}
	if st == running {
		parts = append(parts, "Ctrl-C: cancel and return to the prompt")
	}
	return strings.Join(parts, " · ")
}

// tableau is tableau mode: rows printed as they arrive, under a header,
// with their op, as Flink prints a streaming result.
type tableau struct {
	b        box
	cols     []types.Field
	loc      *time.Location
	received int
}

func newTableau(cols []types.Field, loc *time.Location) *tableau {
	return &tableau{b: streamBox(cols, true), cols: cols, loc: loc}
}

func (t *tableau) start() string { return strings.Join(t.b.header(), "\n") + "\n" }

func (t *tableau) add(r event.Row) string {
	t.received++
	return t.b.line(cells(r, t.cols, true, t.loc)) + "\n"
}

// end closes the table and says how many rows came, as Flink does.
func (t *tableau) end(st status) string {
	if st == cancelled {
		return fmt.Sprintf("%s\nQuery terminated, received a total of %s\n", t.b.border(), plural(t.received, "row"))
	}
	return fmt.Sprintf("%s\nReceived a total of %s\n", t.b.border(), plural(t.received, "row"))
}
