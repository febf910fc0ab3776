// Package session runs Flink SQL scripts: SET, CREATE TABLE/VIEW, DROP,
// SHOW TABLES, DESCRIBE, EXPLAIN [CHANGELOG_MODE], and INSERT INTO
// statements, which — like a statement set — all become one job. It is
// what `weir run FILE.sql` executes.
package session

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weirstream/weir/graph"
	"github.com/weirstream/weir/runtime"
	"github.com/weirstream/weir/sql/catalog"
	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/sql/planner"
	"github.com/weirstream/weir/sql/wasmudf"
)

// Session is one SQL session.
type Session struct {
	Catalog    *catalog.Catalog
	Settings   Settings
	Connectors *planner.Connectors
	// Out receives SHOW, DESCRIBE and EXPLAIN output. Default os.Stdout.
	Out     io.Writer
	inserts []*parser.Insert
	// functions are the CREATE FUNCTION … LANGUAGE WASM functions by
	// upper-case name.
	functions map[string]*expr.Function
}

// New returns a session with every connector: the built-in ones and kafka,
// upsert-kafka and jdbc.
func New() *Session {
	s := &Session{Catalog: catalog.New(), Settings: Settings{}, Connectors: planner.BuiltinConnectors(), Out: os.Stdout}
	planner.RegisterExternal(s.Connectors, func() time.Duration {
		d, _, _ := s.Settings.duration("execution.checkpointing.interval")
		return d
	})
	return s
}

// Execute runs every statement of a script; INSERTs are collected (see Job).
func (s *Session) Execute(src string) error {
	stmts, err := parser.ParseScript(src)
	if err != nil {
		return err
	}
	for _, st := range stmts {
		if err := s.statement(st); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) statement(st parser.Statement) error {
	switch st := st.(type) {
	case *parser.SetStmt:
		if st.Key == "" {
			return s.showSettings()
		}
		return s.setAt(st)
	case *parser.ResetStmt:
		s.reset(st.Key)
	case *parser.CreateTable:
		if st.AsQuery != nil {
			return errAt(st.Pos, "CREATE TABLE … AS SELECT is not supported yet; CREATE TABLE then INSERT INTO")
		}
		return s.Catalog.CreateTable(st)
	case *parser.CreateView:
		return s.Catalog.CreateView(st)
	case *parser.Drop:
		return s.Catalog.Drop(st.Name, st.IfExists)
	case *parser.Show:
		_, err := fmt.Fprintln(s.Out, strings.Join(s.Catalog.Names(), "\n"))
		return err
	case *parser.Describe:
		return s.describe(st)
	case *parser.Explain:
		return s.explain(st)
	case *parser.Insert:
		s.inserts = append(s.inserts, st)
	case *parser.StatementSet:
		s.inserts = append(s.inserts, st.Inserts...)
	case *parser.Query:
		return errAt(st.Pos, "a bare SELECT needs a sink in a job: write INSERT INTO a table WITH ('connector' = 'print')")
	case *parser.CreateFunction:
		return s.createFunction(st)
	default:
		return errAt(st.Position(), "this statement is not supported")
	}
	return nil
}

// createFunction loads a WebAssembly function; Java, Scala and Python
// functions are refused.
func (s *Session) createFunction(st *parser.CreateFunction) error {
	if st.Language != "WASM" {
		return &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("CREATE FUNCTION … LANGUAGE %s is not supported: Weir runs no Java or Python "+
			"user-defined functions", cmp.Or(st.Language, "JAVA")), Hint: "compile the function to WebAssembly: CREATE FUNCTION f AS 'export' LANGUAGE WASM USING JAR 'f.wasm'"}
	}
	if st.Using == "" {
		return errAt(st.Pos, "CREATE FUNCTION %s … LANGUAGE WASM needs USING JAR 'module.wasm'", strings.Join(st.Name, "."))
	}
	name := strings.ToUpper(st.Name[len(st.Name)-1])
	if _, ok := s.functions[name]; ok {
		if st.IfNotExists {
			return nil
		}
		return errAt(st.Pos, "function %s exists already", name)
	}
	o, err := s.Settings.wasmOptions()
	if err != nil {
		return &planner.Error{Pos: st.Pos, Msg: err.Error()}
	}
	f, err := wasmudf.Load(name, st.Using, st.Class, o)
	if err != nil {
		return &planner.Error{Pos: st.UsingPos, Msg: err.Error(), Hint: "build the module for wasm32 and export the function named after AS", Err: err}
	}
	if s.functions == nil {
		s.functions = map[string]*expr.Function{}
	}
	s.functions[name] = f
	return nil
}

func errAt(pos parser.Pos, format string, args ...any) error {
	return &planner.Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (s *Session) reset(key string) {
	if key == "" {
		s.Settings = Settings{}
		return
	}
	delete(s.Settings, key)
}

func (s *Session) showSettings() error {
	for k, v := range s.Settings {
		if _, err := fmt.Fprintf(s.Out, "'%s' = '%s'\n", k, v); err != nil {
			return err
		}
	}
	return nil
}

func (s *Session) describe(d *parser.Describe) error {
	cols, found, err := s.Describe(d.Name)
	if !found {
		return errAt(d.Pos, "table %q not found", strings.Join(d.Name, "."))
	}
	if err != nil {
		return errAt(d.Pos, "%v", err)
	}
	fmt.Fprintf(s.Out, "%-20s %-30s %-5s %-5s %s\n", "name", "type", "null", "key", "extras")
	for _, c := range cols {
		extra := strings.TrimSpace(c.Extras + " " + watermarkExtra(c.Watermark))
		fmt.Fprintf(s.Out, "%-20s %-30s %-5s %-5s %s\n", c.Name, c.Type, c.Null, c.Key, extra)
	}
	return nil
}

func watermarkExtra(wm string) string {
	if wm == "" {
		return ""
	}
	return "WATERMARK AS " + wm
}

// Location is the session time zone, 'table.local-time-zone': an IANA
// name (Europe/Berlin), UTC, or a custom ID (GMT+08:00); 'default' is
// the machine's zone, as in Flink. Unset it is UTC — not Flink's machine
// zone — so that a script gives the same result on every machine.
func (s *Session) Location() (*time.Location, error) {
	v, ok := s.Settings["table.local-time-zone"]
	switch {
	case !ok:
		return time.UTC, nil
	case v == "default":
		return time.Local, nil
	}
	if loc, ok := expr.ZoneByName(v); ok {
		return loc, nil
	}
	return nil, fmt.Errorf("'table.local-time-zone' = '%s' is not a time zone; hint: use a full name such as 'America/Los_Angeles', "+
		"a custom ID such as 'GMT-08:00', 'UTC', or 'default' (the machine's zone)", v)
}

func (s *Session) planner() (*planner.Planner, error) {
	cfg := planner.Config{Parallelism: 1, Functions: s.functions}
	var err error
	if n, ok, e := s.Settings.int("parallelism.default"); e != nil {
		return nil, e
	} else if ok {
		cfg.Parallelism = n
	}
	if cfg.StateTTL, _, err = s.Settings.duration("table.exec.state.ttl"); err != nil {
		return nil, err
	}
	if cfg.IdleTimeout, _, err = s.Settings.duration("table.exec.source.idle-timeout"); err != nil {
		return nil, err
	}
	var set bool
	if cfg.MaxFutureSkew, set, err = s.Settings.duration("table.exec.source.max-future-skew"); err != nil {
		return nil, err
	} else if !set {
		cfg.MaxFutureSkew = planner.DefaultMaxFutureSkew
	}
	if cfg.Location, err = s.Location(); err != nil {
		return nil, err
	}
	if err := s.Settings.miniBatch(&cfg); err != nil {
		return nil, err
	}
	if err := s.Settings.sinkModes(&cfg); err != nil {
		return nil, err
	}
	return &planner.Planner{Catalog: s.Catalog, Connectors: s.Connectors, Config: cfg}, nil
}

func (s *Session) explain(e *parser.Explain) error {
	p, err := s.planner()
	if err != nil {
		return err
	}
	changelog := false
	for _, d := range e.Details {
		changelog = changelog || d == parser.ChangelogMode
	}
	var rels []*planner.Rel
	switch st := e.Stmt.(type) {
	case *parser.Query:
		r, err := p.Plan(st)
		if err != nil {
			return err
		}
		rels = append(rels, r)
	case *parser.Insert:
		r, err := p.PlanInsert(st)
		if err != nil {
			return err
		}
		rels = append(rels, r)
	case *parser.StatementSet:
		rs, err := p.PlanInserts(st.Inserts)
		if err != nil {
			return err
		}
		rels = rs
	}
	fmt.Fprintln(s.Out, "== Optimized Physical Plan ==")
	for _, r := range rels {
		fmt.Fprint(s.Out, planner.Explain(r, changelog))
	}
	return nil
}

// Inserts are the INSERT statements collected so far.
func (s *Session) Inserts() []*parser.Insert { return s.inserts }

// Job plans the collected INSERTs as one job, named as JobName says, and
// returns its graph and runtime options (from the session's settings).
func (s *Session) Job(name string) (*graph.JobGraph, runtime.Options, error) {
	if len(s.inserts) == 0 {
		return nil, runtime.Options{}, fmt.Errorf("the script has no INSERT INTO statement: nothing to run")
	}
	name = s.JobName(name)
	p, err := s.planner()
	if err != nil {
		return nil, runtime.Options{}, err
	}
	sinks, err := p.PlanInserts(s.inserts)
	if err != nil {
		return nil, runtime.Options{}, err
	}
	sg, err := p.Build(name, sinks)
	if err != nil {
		return nil, runtime.Options{}, err
	}
	jg, err := sg.JobGraph()
	if err != nil {
		return nil, runtime.Options{}, err
	}
	opts, err := s.Settings.RuntimeOptions(name)
	return jg, opts, err
}

// Run executes the collected INSERTs as one job.
func (s *Session) Run(ctx context.Context, name string, tune func(*runtime.Options)) (*runtime.Result, error) {
	jg, opts, err := s.Job(name)
	if err != nil {
		return nil, err
	}
	if tune != nil {
		tune(&opts)
	}
	return runtime.Run(ctx, jg, opts)
}

// JobName is the name of the session's job: 'pipeline.name' when set,
// else fallback (a script's JobName). It names the default checkpoint
// directory, .weir/checkpoints/<name>, so weir run and weir savepoint must
// both take it from here.
func (s *Session) JobName(fallback string) string {
	if n := s.Settings["pipeline.name"]; n != "" {
		return n
	}
	return fallback
}

// JobName derives a job name from a script path: its base name without
// extension.
func JobName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
}

// ExplainInserts prints the plan of every collected INSERT with its
// changelog modes.
func (s *Session) ExplainInserts() error {
	p, err := s.planner()
	if err != nil {
		return err
	}
	rels, err := p.PlanInserts(s.inserts)
	if err != nil {
		return err
	}
	fmt.Fprintln(s.Out, "== Optimized Physical Plan ==")
	for _, r := range rels {
		fmt.Fprint(s.Out, planner.Explain(r, true))
	}
	return nil
}
