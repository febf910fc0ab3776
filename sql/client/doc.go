// Package client is Weir's SQL client, Flink's sql-client.sh: a shell that
// reads statements ended by ';' (from a terminal with line editing and
// history, or from a script), runs DDL and SET in a session, shows SELECT
// results live in Flink's three result modes (table, changelog, tableau)
// and submits INSERTs as jobs to a cluster. cmd/weir's `weir sql` wires it
// to a terminal and to a JobManager (or one in the process).
//
// Threading: the shell runs on the caller's goroutine. A SELECT's job runs
// in the process (runtime.Start); its sink hands rows over a channel to
// the shell, which renders them and watches for Ctrl-C (Options.Interrupt).
package client
