// Package parser reads Weir's SQL — the subset of Flink SQL described in
// issue 6 — into an abstract syntax tree, and prints that tree back as
// canonical SQL.
//
// The parser is a hand-written lexer and recursive-descent parser. It owns
// syntax only: it knows nothing of catalogs, so a query naming a table that
// does not exist parses fine; the planner resolves names and types. The few
// checks it does beyond grammar are local to one statement and cheap to
// report precisely (a WATERMARK or PRIMARY KEY naming a column the table
// does not declare, a duplicate column, malformed DATE literals).
//
// Entry points: ParseScript for a file of ';'-separated statements,
// ParseStatement, ParseQuery, ParseExpr and ParseType for fragments, and
// Format to print any node back. Every error is an *Error carrying the
// line:column of the offending token and, where one helps, a hint.
//
// Dialect notes, following Flink (which follows Calcite):
//   - Keywords are case-insensitive; identifiers keep their case and are
//     compared case-sensitively. Back-quotes (`like this`) quote an
//     identifier. Function names are case-insensitive and are stored
//     upper-cased.
//   - Operator precedence, loosest first: OR; AND; NOT; IS [NOT] NULL/TRUE/
//     FALSE/UNKNOWN/DISTINCT FROM; comparisons; [NOT] BETWEEN/LIKE/IN;
//     binary + and -; *, /, % and || (Calcite gives || the precedence of *);
//     unary + and -; then postfix field access, indexing and calls.
//   - Only the words in reserved.go are reserved; other keywords (DATE, KEY,
//     VALUE, HOUR, …) may be used as bare identifiers where unambiguous, a
//     little more leniently than Flink. Format quotes identifiers spelled
//     like a keyword or an SQL reserved word (`value`, `count`), so that its
//     output parses in Flink too.
//   - `${VAR}` placeholders must be substituted before parsing; the lexer
//     reports one it meets as an error naming the variable.
package parser
