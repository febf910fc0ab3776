package main

import (
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// tmuxSQL is weir sql in a terminal, as a person uses it: a private tmux
// server (its own socket) runs it in a 160x50 pane; keys are typed with
// send-keys and the screen read with capture-pane.
type tmuxSQL struct {
	t      *testing.T
	socket string
	dir    string
}

func startTmuxSQL(t *testing.T, args ...string) *tmuxSQL {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux is not installed: scripts/services.sh up installs it")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxSQL{t: t, dir: t.TempDir()}
	s.socket = filepath.Join(s.dir, "tmux.sock")
	cmd := append([]string{"env", "XDG_STATE_HOME=" + s.dir, self, "sql", "--history", s.history()}, args...)
	// The shell writes the client's exit status to a file: tmux's
	// #{pane_dead_status} was seen empty (pane dead, status never ready)
	// after a clean exit, so the test reads the status from the shell.
	var quoted []string
	for _, c := range append(cmd, "; echo $? >"+s.exitFile()) {
		if strings.HasPrefix(c, "; ") {
			quoted = append(quoted, c)
			continue
		}
		quoted = append(quoted, "'"+strings.ReplaceAll(c, "'", `'\''`)+"'")
	}
	s.tmux("new-session", "-d", "-x", "160", "-y", "50", "-s", "sql", strings.Join(quoted, " "))
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", s.socket, "kill-server").Run() })
	s.tmux("set-option", "-t", "sql", "remain-on-exit", "on")
	return s
}

func (s *tmuxSQL) history() string { return filepath.Join(s.dir, "history") }

// exitFile is where the shell in the pane writes the client's exit status.
func (s *tmuxSQL) exitFile() string { return filepath.Join(s.dir, "exit-status") }

// exitStatus is the client's exit status once it has exited, else "".
func (s *tmuxSQL) exitStatus() string {
	b, err := os.ReadFile(s.exitFile())
	if err != nil || !strings.HasSuffix(string(b), "\n") {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (s *tmuxSQL) tmux(args ...string) string {
	s.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screen is what the pane shows, without trailing blanks.
func (s *tmuxSQL) screen() string {
	lines := strings.Split(s.tmux("capture-pane", "-p", "-t", "sql"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// await polls the screen until it contains want, for a generous while.
func (s *tmuxSQL) await(want string) string {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		sc := s.screen()
		if strings.Contains(sc, want) {
			return sc
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the screen never showed\n%s\nit shows\n%s", want, sc)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// typeLine types a line and Enter. A ';' ending a tmux argument would
// end its command, so it is escaped.
func (s *tmuxSQL) typeLine(line string) {
	s.t.Helper()
	if strings.HasSuffix(line, ";") {
		line = strings.TrimSuffix(line, ";") + `\;`
	}
	s.tmux("send-keys", "-t", "sql", "-l", line)
	s.tmux("send-keys", "-t", "sql", "Enter")
}

// fresh clears the screen (CLEAR;) so the next output starts at its top.
func (s *tmuxSQL) fresh() {
	s.t.Helper()
	s.typeLine("CLEAR;")
	deadline := time.Now().Add(20 * time.Second)
	for s.screen() != "Weir SQL>" {
		if time.Now().After(deadline) {
			s.t.Fatalf("CLEAR; left\n%s", s.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

const namesQuery = "FROM (VALUES ('Bob'), ('Alice'), ('Greg'), ('Bob')) AS NameTable(name) GROUP BY name;"

// The SQL client end to end in a terminal: a multi-line SELECT with GROUP
// BY shown in each result mode, Ctrl-C cancelling an endless query, an
// INSERT submitted to a JobManager writing MariaDB, a typo's error, HELP,
// QUIT and the history file.
func TestSQLClientInTerminal(t *testing.T) {
	db, url := openMariaDB(t)
	table := "sql_client_counts_" + strconv.FormatInt(time.Now().UnixNano(), 10)
	if _, err := db.Exec("CREATE TABLE " + table + " (name VARCHAR(20) PRIMARY KEY, cnt BIGINT NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = db.Exec("DROP TABLE IF EXISTS " + table) })
	jm := startJobManager(t, t.TempDir())
	s := startTmuxSQL(t, "-m", jm.url)
	s.await("Weir SQL>")

	// Table mode, Flink's default: the result as a table, Bob's row
	// updated in place. The statement spans two lines.
	s.fresh()
	s.typeLine("SELECT name, COUNT(*) AS cnt")
	s.await("\n>")
	s.typeLine(namesQuery)
	s.await(`SQL Query Result (Table)
+-------+----------------------+
|  name |                  cnt |
+-------+----------------------+
|   Bob |                    2 |
| Alice |                    1 |
|  Greg |                    1 |
+-------+----------------------+
Finished · 3 rows · 5 changes received

Weir SQL>`)

	// The same changes with their op, drawn in place and printed.
	changes := `+----+-------+----------------------+
| op |  name |                  cnt |
+----+-------+----------------------+
| +I |   Bob |                    1 |
| +I | Alice |                    1 |
| +I |  Greg |                    1 |
| -U |   Bob |                    1 |
| +U |   Bob |                    2 |
+----+-------+----------------------+
`
	s.fresh()
	s.typeLine("SET 'sql-client.execution.result-mode' = 'changelog';")
	s.await("[INFO] Execute statement succeeded.")
	s.typeLine("SELECT name, COUNT(*) AS cnt " + namesQuery)
	s.await("SQL Query Result (Changelog)\n" + changes + "Finished · 5 changes received")
	s.fresh()
	s.typeLine("SET 'sql-client.execution.result-mode' = 'tableau';")
	s.await("[INFO] Execute statement succeeded.")
	s.typeLine("SELECT name, COUNT(*) AS cnt " + namesQuery)
	s.await(";\n" + changes + "Received a total of 5 rows\n\nWeir SQL>")

	// Ctrl-C cancels an endless query and the prompt comes back, in
	// tableau mode and in table mode.
	s.fresh()
	s.typeLine("CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '20', " +
		"'fields.id.min' = '0', 'fields.id.max' = '1000');")
	s.await("[INFO] Execute statement succeeded.")
	s.typeLine("SELECT id FROM gen;")
	s.await("+----+----------------------+\n| +I |")
	s.tmux("send-keys", "-t", "sql", "C-c")
	sc := s.await("+----+----------------------+\nQuery terminated, received a total of ")
	if !regexp.MustCompile(`received a total of \d+ rows?\n\nWeir SQL>$`).MatchString(sc) {
		t.Fatalf("no prompt after the cancelled query:\n%s", sc)
	}
	s.fresh()
	s.typeLine("SET 'sql-client.execution.result-mode' = 'table';")
	s.typeLine("SELECT id % 2 AS parity, COUNT(*) AS n FROM gen GROUP BY id % 2;")
	s.await("Running · 2 rows · ")
	s.tmux("send-keys", "-t", "sql", "C-c")
	s.await("Cancelled · 2 rows · ")
	s.await("received\n\nWeir SQL>")

	// An INSERT goes to the JobManager, which writes MariaDB.
	s.fresh()
	s.typeLine(fmt.Sprintf("CREATE TABLE counts (name STRING, cnt BIGINT, PRIMARY KEY (name) NOT ENFORCED) WITH ("+
		"'connector' = 'jdbc', 'url' = '%s', 'table-name' = '%s', 'username' = 'weir', 'password' = 'weir');", url, table))
	s.await("[INFO] Execute statement succeeded.")
	s.typeLine("INSERT INTO counts SELECT name, COUNT(*) AS cnt " + namesQuery)
	sc = s.await("[INFO] SQL update statement has been successfully submitted to the cluster:\nJob ID: ")
	if !strings.Contains(sc, "[INFO] Submitting SQL update statement to the cluster...\n") {
		t.Fatalf("no submitting line:\n%s", sc)
	}
	id := regexp.MustCompile(`Job ID: ([0-9a-f]{32})`).FindStringSubmatch(sc)
	if id == nil {
		t.Fatalf("no job id:\n%s", sc)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		s.fresh()
		s.typeLine("SHOW JOBS;")
		if sc := s.await("in set"); strings.Contains(sc, id[1]+" | insert-into_counts | FINISHED |") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the job never finished:\n%s", sc)
		}
	}
	if got := mariaRows(t, db, table); got != "Alice=1 Bob=2 Greg=1" {
		t.Fatalf("the sink holds %s, want Alice=1 Bob=2 Greg=1", got)
	}

	// A typo: the error names the place, and the shell goes on.
	s.fresh()
	s.typeLine("SELEC id FROM gen;")
	s.await("[ERROR] Could not execute SQL statement. Reason:\nline 1:1: ")
	s.typeLine("HELP;")
	s.await("The following commands are available:")

	s.typeLine("QUIT;")
	s.await("Shutting down the session...\ndone.")
	deadline := time.Now().Add(20 * time.Second)
	for st := s.exitStatus(); st != "0"; st = s.exitStatus() {
		if st != "" || time.Now().After(deadline) {
			t.Fatalf("weir sql did not exit with status 0 (status %q):\n%s", st, s.screen())
		}
		time.Sleep(20 * time.Millisecond)
	}
	hist, err := os.ReadFile(s.history())
	if err != nil {
		t.Fatal(err)
	}
	if want := "SELECT name, COUNT(*) AS cnt " + namesQuery + "\n"; !strings.Contains(string(hist), want) {
		t.Fatalf("the history file lacks the two-line statement as one line %q:\n%s", want, hist)
	}
}

// mariaRows is the table's rows as "name=cnt …", by name.
func mariaRows(t *testing.T, db *sql.DB, table string) string {
	rows, err := db.Query("SELECT name, cnt FROM " + table + " ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		var cnt int64
		if err := rows.Scan(&name, &cnt); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s=%d", name, cnt))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, " ")
}
