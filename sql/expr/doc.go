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
// Aggregate calls (IsAggregate), OVER windows, group window functions
// (SESSION_START …) and subqueries belong to the planner: Compile rejects
// them unless Scope.Resolve supplies their value. User-defined scalar
// functions (CREATE FUNCTION) come in through Scope.Functions.
//
// Built-in scalar functions, with Flink's names and NULL-in-NULL-out
// unless their doc comment says otherwise:
//
//	string      UPPER LOWER INITCAP CHAR_LENGTH CHARACTER_LENGTH TRIM LTRIM RTRIM
//	            SUBSTRING SUBSTR REPLACE CONCAT CONCAT_WS POSITION LOCATE INSTR OVERLAY TRANSLATE ELT
//	            SPLIT_INDEX REGEXP REGEXP_EXTRACT REGEXP_REPLACE LPAD RPAD REPEAT
//	            REVERSE LEFT RIGHT ASCII CHR TO_BASE64 FROM_BASE64 PARSE_URL
//	            STR_TO_MAP IS_ALPHA IS_DIGIT IS_DECIMAL BIN HEX TYPEOF
//	hash        MD5 SHA1 SHA224 SHA256 SHA384 SHA512 SHA2
//	numeric     ABS SIGN MOD POWER SQRT EXP LN LOG LOG10 LOG2 FLOOR CEIL CEILING
//	            ROUND TRUNCATE PI E SIN COS TAN COT ASIN ACOS ATAN ATAN2 SINH
//	            COSH TANH DEGREES RADIANS
//	conditional COALESCE IFNULL NULLIF IF GREATEST LEAST, CASE
//	temporal    DATE_FORMAT TO_TIMESTAMP TO_TIMESTAMP_LTZ TO_DATE FROM_UNIXTIME
//	            UNIX_TIMESTAMP EXTRACT YEAR QUARTER MONTH WEEK DAYOFYEAR
//	            DAYOFMONTH DAYOFWEEK HOUR MINUTE SECOND FLOOR/CEIL(t TO unit)
//	            TIMESTAMPADD TIMESTAMPDIFF CONVERT_TZ, and from the Scope's
//	            clock CURRENT_TIMESTAMP NOW CURRENT_ROW_TIMESTAMP LOCALTIMESTAMP
//	            CURRENT_DATE CURRENT_TIME LOCALTIME PROCTIME
//	collection  ARRAY[…] MAP[…] ROW(…) x[i] m[k] x.field CARDINALITY ELEMENT
//	            ARRAY_CONTAINS MAP_KEYS MAP_VALUES
//	json        JSON_VALUE JSON_QUERY JSON_EXISTS (basic lax/strict paths,
//	            RETURNING, ON EMPTY / ON ERROR, array wrappers), JSON_OBJECT
//	            JSON_ARRAY
//
// Regular expressions are Go's RE2, which is Java's syntax without
// backreferences and lookaround. Date format patterns are Java's
// SimpleDateFormat letters, printed in the US English locale.
//
// Imports: sql/parser, sql/types and shopspring/decimal only. The planner
// and the operators in sql/exec import this package; it must never import
// them.
package expr
