package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/sql/planner"
	"github.com/weirstream/weir/sql/session"
)

// Cluster runs the jobs of INSERT statements: a JobManager over REST, or
// one in the process.
type Cluster interface {
	// Submit starts a job and returns its id.
	Submit(ctx context.Context, job Job) (string, error)
	// Jobs lists the cluster's jobs (SHOW JOBS).
	Jobs(ctx context.Context) ([]JobInfo, error)
	// ExplainAnalyze returns a job's plan with its live figures (EXPLAIN
	// ANALYZE 'job id').
	ExplainAnalyze(ctx context.Context, job string) (string, error)
}

// Job is an INSERT (or statement set) to run: a script of the DDL it
// needs and the INSERT, with the session's settings.
type Job struct {
	Name, Script string
	Settings     map[string]string
}

// JobInfo is a line of SHOW JOBS.
type JobInfo struct {
	ID, Name, Status string
	Start            time.Time
}

// Options configure a Shell.
type Options struct {
	// Out receives results and messages. Default os.Stdout.
	Out io.Writer
	// Cluster runs INSERT jobs. Required.
	Cluster Cluster
	// Settings are the session's initial settings (-D), which RESET
	// restores. Default none.
	Settings map[string]string
	// Interrupt delivers Ctrl-C while a SELECT runs: the query is
	// cancelled. Default nil: a SELECT runs until it ends.
	Interrupt <-chan os.Signal
	// TermSize is the size of the terminal Out is, for the live views of
	// table and changelog modes. Default nil: Out is no terminal, and
	// SELECT needs tableau mode (as Flink's -f).
	TermSize func() (width, height int)
	// Logger receives the logs of SELECT jobs. Default: discarded (they
	// would write over the result).
	Logger *slog.Logger
	// Refresh is how often a live view is drawn again while rows
	// arrive. Default 100 ms.
	Refresh time.Duration
}

// Shell runs statements one at a time in one session.
type Shell struct {
	opts Options
	sess *session.Session
	// ddl are the CREATE and DROP statements run so far, in order: each
	// submitted job's script replays them before its INSERT.
	ddl []string
}

// errQuit ends the shell: QUIT; or EXIT;.
var errQuit = errors.New("client: quit")

// New returns a shell with a new session.
func New(opts Options) *Shell {
	if opts.Out == nil {
		opts.Out = os.Stdout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Refresh <= 0 {
		opts.Refresh = 100 * time.Millisecond
	}
	s := session.New()
	s.Out = opts.Out
	maps.Copy(s.Settings, opts.Settings)
	return &Shell{opts: opts, sess: s}
}

// ScriptError is a statement of a script (-f, -i) that failed: the file
// and the place in it.
type ScriptError struct {
	File string
	Pos  parser.Pos
	Err  error
}

// Error prefixes the statement's error with file:line:col.
func (e *ScriptError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %v", e.File, e.Pos.Line, e.Pos.Col, e.Err)
}

// Unwrap returns the statement's error, for errors.Is and errors.As.
func (e *ScriptError) Unwrap() error { return e.Err }

// RunScript runs a script's statements in order and stops at the first
// that fails (or at QUIT;), returning a *ScriptError naming the file and
// the place. A last statement without ';' runs too.
func (sh *Shell) RunScript(ctx context.Context, file, src string) error {
	pieces, rest := parser.Split(src)
	if strings.TrimSpace(rest) != "" {
		src += "\n;"
		if pieces, rest = parser.Split(src); strings.TrimSpace(rest) != "" {
			// Still open (an unterminated string): the parser says where.
			before := src[:len(src)-len(rest)]
			at := parser.Pos{Line: strings.Count(before, "\n") + 1, Col: len([]rune(before[strings.LastIndexByte(before, '\n')+1:])) + 1}
			pieces = append(pieces, parser.Piece{Text: rest, Start: at, First: at})
		}
	}
	for _, p := range pieces {
		err := sh.Execute(ctx, p, file)
		if errors.Is(err, errQuit) {
			return nil
		}
		if err != nil {
			return &ScriptError{File: file, Pos: placeOf(err, p), Err: err}
		}
	}
	return nil
}

// placeOf is where err happened: its own position, else the statement's.
// A syntax error's position wins over a planning error's, which wins over
// an expression error's, wherever each is in err's chain.
func placeOf(err error, p parser.Piece) parser.Pos {
	for _, class := range []func(*parser.Error) bool{
		(*parser.Error).IsSyntax,
		func(e *parser.Error) bool { return e.Class == nil && e.Pos.Line > 0 },
		func(e *parser.Error) bool { return e.Class != nil && e.Pos.Line > 0 },
	} {
		if e := findSQLError(err, class); e != nil {
			return e.Pos
		}
	}
	return p.First
}

// findSQLError returns the first positional SQL error in err's chain for
// which match holds (errors.As would stop at the first of any kind).
func findSQLError(err error, match func(*parser.Error) bool) *parser.Error {
	switch x := err.(type) {
	case nil:
		return nil
	case *parser.Error:
		if match(x) {
			return x
		}
	case interface{ Unwrap() error }:
		return findSQLError(x.Unwrap(), match)
	}
	if x, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range x.Unwrap() {
			if found := findSQLError(e, match); found != nil {
				return found
			}
		}
	}
	return nil
}

// Execute runs one statement and prints its outcome; a failure is printed
// as Flink's [ERROR] and returned. where names the script for the error
// ("" at the prompt).
func (sh *Shell) Execute(ctx context.Context, p parser.Piece, where string) error {
	err := sh.execute(ctx, p)
	if err == nil || errors.Is(err, errQuit) {
		return err
	}
	at := ""
	if where != "" {
		pos := placeOf(err, p)
		at = fmt.Sprintf(" (%s:%d:%d)", where, pos.Line, pos.Col)
	}
	fmt.Fprintf(sh.opts.Out, "[ERROR] Could not execute SQL statement%s. Reason:\n%v\n\n", at, err)
	return err
}

func (sh *Shell) execute(ctx context.Context, p parser.Piece) error {
	if done, err := sh.command(ctx, words(p.Text)); done {
		return err
	}
	text, err := session.ExpandEnv(p.Padded())
	if err != nil {
		return err
	}
	st, err := parser.ParseStatement(text)
	if err != nil {
		return err
	}
	switch st := st.(type) {
	case *parser.Query:
		return sh.query(ctx, st)
	case *parser.Insert, *parser.StatementSet:
		return sh.insert(ctx, st, strings.TrimSpace(text))
	case *parser.SetStmt:
		return sh.set(st)
	case *parser.ResetStmt:
		sh.reset(st.Key)
	case *parser.Show:
		return sh.show(st)
	case *parser.Describe:
		return sh.describe(st)
	case *parser.CreateTable, *parser.CreateView, *parser.Drop:
		if err := sh.sess.Statement(st); err != nil {
			return err
		}
		sh.ddl = append(sh.ddl, strings.TrimSpace(text))
	default:
		if err := sh.sess.Statement(st); err != nil {
			return err
		}
		if _, ok := st.(*parser.Explain); ok {
			return nil
		}
	}
	sh.info("Execute statement succeeded.")
	return nil
}

func (sh *Shell) info(msg string) { fmt.Fprintf(sh.opts.Out, "[INFO] %s\n\n", msg) }

// words are a statement's words upper-cased, without its ';' and
// comments: what the client's own commands are matched by.
func words(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		out = append(out, strings.Fields(strings.ToUpper(strings.ReplaceAll(line, ";", " ")))...)
	}
	return out
}

// set runs SET: with no key it lists the settings; a result mode is
// checked here, since only the client reads it.
func (sh *Shell) set(st *parser.SetStmt) error {
	if st.Key == "" {
		keys := slices.Sorted(maps.Keys(sh.sess.Settings))
		rows := make([][]string, len(keys))
		for i, k := range keys {
			rows[i] = []string{k, sh.sess.Settings[k]}
		}
		fmt.Fprintln(sh.opts.Out, table([]string{"key", "value"}, rows))
		return nil
	}
	if st.Key == keyResultMode {
		mode := strings.ToLower(strings.TrimSpace(st.Value))
		if mode != modeTable && mode != modeChangelog && mode != modeTableau {
			e := &planner.Error{Pos: st.Pos, Msg: fmt.Sprintf("SET '%s' = '%s': want 'table', 'changelog' or 'tableau'", st.Key, st.Value)}
			if m, ok := parser.Closest(mode, []string{modeTable, modeChangelog, modeTableau}); ok {
				e.Hint = fmt.Sprintf("did you mean '%s'?", m)
			}
			return e
		}
	}
	if err := sh.sess.Statement(st); err != nil {
		return err
	}
	sh.info("Execute statement succeeded.")
	return nil
}

// reset restores a key (or all) to its value at the start (-D), as Flink
// restores its configuration.
func (sh *Shell) reset(key string) {
	if key == "" {
		clear(sh.sess.Settings)
		maps.Copy(sh.sess.Settings, sh.opts.Settings)
	} else if v, ok := sh.opts.Settings[key]; ok {
		sh.sess.Settings[key] = v
	} else {
		delete(sh.sess.Settings, key)
	}
}

// insert plans the INSERT here, so a mistake is shown with its place at
// once, then submits it with the DDL before it as a job of its own.
func (sh *Shell) insert(ctx context.Context, st parser.Statement, text string) error {
	defer sh.sess.ClearInserts()
	if err := sh.sess.Statement(st); err != nil {
		return err
	}
	name := "insert-into"
	for _, ins := range sh.sess.Inserts() {
		name += "_" + strings.Join(ins.Table, ".")
	}
	jg, _, err := sh.sess.Job(name)
	if err != nil {
		return err
	}
	script := strings.Join(append(slices.Clone(sh.ddl), text), "\n")
	fmt.Fprintln(sh.opts.Out, "[INFO] Submitting SQL update statement to the cluster...")
	id, err := sh.opts.Cluster.Submit(ctx, Job{Name: jg.JobName, Script: script, Settings: maps.Clone(sh.sess.Settings)})
	if err != nil {
		return err
	}
	fmt.Fprintf(sh.opts.Out, "[INFO] SQL update statement has been successfully submitted to the cluster:\nJob ID: %s\n\n", id)
	return nil
}
