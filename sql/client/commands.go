package client

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/weirstream/weir/sql/expr"
	"github.com/weirstream/weir/sql/parser"
	"github.com/weirstream/weir/sql/planner"
)

// help is HELP;'s text.
const help = `The following commands are available:

CLEAR               Clears the terminal.
HELP                Prints this help.
QUIT / EXIT         Quits the SQL client (Ctrl-D too).
SET                 Sets a session option: SET 'key' = 'value'; SET; lists them.
RESET               Resets a session option to its start value: RESET 'key'; RESET; resets all.
SHOW TABLES         Lists the tables (also SHOW VIEWS, SHOW FUNCTIONS, SHOW JOBS).
DESCRIBE            Describes a table's columns: DESCRIBE name.
CREATE TABLE/VIEW   Declares a table (WITH its connector options) or a view.
DROP TABLE/VIEW     Drops one.
SELECT              Runs a query in this process and shows its result live; Ctrl-C cancels it.
INSERT INTO         Submits a job writing a query's result to a table.
BEGIN STATEMENT SET Begins a statement set: INSERTs up to END; run as one job.
EXPLAIN             Prints a statement's plan.
EXPLAIN ANALYZE     Prints a running job's plan with each operator chain's rows/s, busy and
                    back-pressured time, state size and watermark: EXPLAIN ANALYZE 'job id'.

Statements end with ';' and may span lines. A SELECT's result shows in the
result mode of SET 'sql-client.execution.result-mode' = 'table' (a table
updated in place, the default), 'changelog' (every change with its op) or
'tableau' (rows printed as they arrive).
`

// command runs the client's own commands (HELP, QUIT, CLEAR, SHOW JOBS),
// which are no SQL; done is false for anything else.
func (sh *Shell) command(ctx context.Context, w []string) (done bool, err error) {
	switch strings.Join(w, " ") {
	case "HELP":
		io.WriteString(sh.opts.Out, help+"\n")
	case "QUIT", "EXIT":
		io.WriteString(sh.opts.Out, "Shutting down the session...\ndone.\n")
		return true, errQuit
	case "CLEAR":
		io.WriteString(sh.opts.Out, "\033[H\033[2J")
	case "SHOW JOBS":
		return true, sh.showJobs(ctx)
	default:
		if len(w) == 3 && w[0] == "EXPLAIN" && w[1] == "ANALYZE" {
			return true, sh.explainAnalyze(ctx, strings.ToLower(strings.Trim(w[2], "'`\"")))
		}
		return false, nil
	}
	return true, nil
}

func (sh *Shell) showJobs(ctx context.Context) error {
	jobs, err := sh.opts.Cluster.Jobs(ctx)
	if err != nil {
		return err
	}
	rows := make([][]string, len(jobs))
	for i, j := range jobs {
		rows[i] = []string{j.ID, j.Name, j.Status, j.Start.UTC().Format("2006-01-02T15:04:05.000Z")}
	}
	fmt.Fprintln(sh.opts.Out, table([]string{"job id", "job name", "status", "start time"}, rows))
	return nil
}

// explainAnalyze prints job's plan with its live figures (a job id is
// upper-cased by words; ids are lower-case hex).
func (sh *Shell) explainAnalyze(ctx context.Context, job string) error {
	plan, err := sh.opts.Cluster.ExplainAnalyze(ctx, job)
	if err != nil {
		return err
	}
	_, err = io.WriteString(sh.opts.Out, plan+"\n")
	return err
}

func (sh *Shell) show(st *parser.Show) error {
	var header string
	var names []string
	switch st.Object {
	case parser.TableObject:
		header, names = "table name", sh.sess.Catalog.TableNames()
	case parser.ViewObject:
		header, names = "view name", sh.sess.Catalog.ViewNames()
	default:
		header, names = "function name", expr.FunctionNames()
	}
	rows := make([][]string, len(names))
	for i, n := range names {
		rows[i] = []string{n}
	}
	fmt.Fprintln(sh.opts.Out, table([]string{header}, rows))
	return nil
}

// describe prints a table's or view's columns as Flink's DESCRIBE: name,
// type, nullability, key, computed expression and watermark.
func (sh *Shell) describe(d *parser.Describe) error {
	cols, found, err := sh.sess.Describe(d.Name)
	if !found {
		e := &planner.Error{Pos: d.Pos, Msg: fmt.Sprintf("table %q not found", strings.Join(d.Name, "."))}
		if s := sh.sess.Catalog.Suggest(d.Name[len(d.Name)-1]); s != "" {
			e.Hint = fmt.Sprintf("did you mean %q?", s)
		}
		return e
	}
	if err != nil {
		return err
	}
	var rows [][]string
	for _, c := range cols {
		rows = append(rows, []string{c.Name, c.Type, c.Null, c.Key, c.Extras, c.Watermark})
	}
	fmt.Fprintln(sh.opts.Out, table([]string{"name", "type", "null", "key", "extras", "watermark"}, rows))
	return nil
}
