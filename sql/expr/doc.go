// Package expr compiles scalar SQL expressions — a parser.Expr resolved
// against the columns of an input row — into typed evaluators, with Flink
// SQL's semantics.
//
// Compile checks names and types once and returns a *Compiled whose Eval
// reads a row ([]any, one value per Scope column, carried as described in
// package types) and returns the expression's value. Errors from Compile
// and from Eval are *Error values carrying the line:column of the offending
// expression, so a user sees where a query went wrong.
//
// Semantics follow Flink (which follows Calcite):
//   - Three-valued logic: NULL AND FALSE is FALSE, NULL AND TRUE is NULL,
//     comparisons with NULL are NULL; a WHERE keeps a row only when its
//     condition is TRUE (see IsTrue).
//   - Integer arithmetic stays in the wider operand type and wraps on
//     overflow like Java's int and long; integer / integer truncates.
//   - DECIMAL arithmetic is exact, with Flink's result precision and scale
//     (LogicalTypeMerging): + and - keep the larger scale, * adds scales,
//     / uses scale max(6, s1 + p2 + 1); results are capped at precision 38
//     and round HALF_UP. A result that overflows its precision is NULL.
//   - Any DOUBLE or FLOAT operand makes the result approximate.
//   - CAST fails at run time with an error naming the value; TRY_CAST
//     returns NULL instead.
//   - DAY-TIME intervals are int64 milliseconds and YEAR-MONTH intervals
//     int64 months, typed BIGINT NOT NULL with Compiled.Interval set.
//   - TIMESTAMP values are wall-clock times carried in UTC; TIMESTAMP_LTZ
//     values are instants, shown in the Scope's time zone.
//
// Aggregate calls (IsAggregate), OVER windows and subqueries belong to the
// planner: Compile rejects them unless Scope.Resolve supplies their value.
package expr
