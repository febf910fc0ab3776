package parser

import "github.com/weirstream/weir/types"

// Node is any node of the syntax tree.
type Node interface {
	// Position is where the node starts in the source; for an operator
	// (Binary, Is, Between, Like, InList, InQuery, SetOp, Join, Index,
	// FieldAccess) it is where the operator or keyword is.
	Position() Pos
}

// Statement is a top-level statement of a script.
type Statement interface {
	Node
	stmtNode()
}

// Expr is a scalar expression.
type Expr interface {
	Node
	exprNode()
}

// TableExpr is an item of a FROM clause: a table, a derived table, a table
// function, UNNEST, or a join of two of them.
type TableExpr interface {
	Node
	tableNode()
}

// QueryBody is the body of a Query: a *Select, a *SetOp, a *Values, or a
// parenthesized *Query.
type QueryBody interface {
	Node
	bodyNode()
}

// Name is a possibly qualified object name: [catalog.][database.]object.
// Parts keep the case they were written in.
type Name []string

// ---------------------------------------------------------------- statements

// SetStmt is SET 'key' = 'value', or a bare SET (Key == "") listing the
// configuration.
type SetStmt struct {
	Pos
	Key, Value string
}

// ResetStmt is RESET, or RESET 'key'.
type ResetStmt struct {
	Pos
	Key string // "" resets everything
}

// ColumnKind says how a table column gets its value.
type ColumnKind int

const (
	// PhysicalColumn is read from and written to the connector's payload.
	PhysicalColumn ColumnKind = iota
	// ComputedColumn is `name AS expr`, computed on read, never written.
	ComputedColumn
	// MetadataColumn is `name type METADATA [FROM 'key'] [VIRTUAL]`.
	MetadataColumn
)

// String is the kind as SHOW CREATE TABLE and DESCRIBE name it: PHYSICAL,
// COMPUTED or METADATA.
func (k ColumnKind) String() string { return [...]string{"PHYSICAL", "COMPUTED", "METADATA"}[k] }

// ColumnDef is one column of CREATE TABLE.
type ColumnDef struct {
	Pos
	Name string
	Kind ColumnKind
	// Type is the declared type; the zero Type for a computed column.
	Type types.Type
	// Expr is a computed column's expression.
	Expr Expr
	// MetadataKey is a metadata column's FROM 'key'; "" means the column
	// name is the key.
	MetadataKey string
	// Virtual marks a metadata column that is read but never written.
	Virtual bool
	Comment string
}

// Watermark is WATERMARK FOR column AS expr; Pos is the column name's.
type Watermark struct {
	Pos
	Column string
	Expr   Expr
}

// PrimaryKey is PRIMARY KEY (cols) NOT ENFORCED, declared either on the
// table or inline on a column (which the parser folds into the table-level
// form).
type PrimaryKey struct {
	Pos
	Constraint string // CONSTRAINT name, or ""
	Columns    []string
}

// Option is one 'key' = 'value' of a WITH clause or an OPTIONS hint.
type Option struct {
	Pos
	Key, Value string
}

// CreateTable is CREATE [TEMPORARY] TABLE [IF NOT EXISTS].
type CreateTable struct {
	Pos
	Temporary, IfNotExists bool
	Name                   Name
	Columns                []*ColumnDef
	Watermark              *Watermark  // nil if none
	PrimaryKey             *PrimaryKey // nil if none
	Comment                string
	PartitionedBy          []string
	Options                []*Option
	// AsQuery is the query of CREATE TABLE … AS SELECT, or nil.
	AsQuery *Query
}

// CreateView is CREATE [TEMPORARY] VIEW [IF NOT EXISTS] name [(cols)] AS query.
type CreateView struct {
	Pos
	Temporary, IfNotExists bool
	Name                   Name
	Columns                []string
	Query                  *Query
}

// CreateFunction is CREATE [TEMPORARY [SYSTEM]] FUNCTION [IF NOT EXISTS]
// name AS 'class' [LANGUAGE lang] [USING JAR 'path'].
type CreateFunction struct {
	Pos
	Temporary, System, IfNotExists bool
	Name                           Name
	Class                          string
	Language                       string // "JAVA", "SCALA", "PYTHON", "WASM" or ""
	Using                          string // USING JAR's path; "" without
	UsingPos                       Pos
}

// ObjectKind is the kind of catalog object a DROP or SHOW names.
type ObjectKind int

const (
	// TableObject is a table: DROP TABLE, SHOW TABLES (the zero value).
	TableObject ObjectKind = iota
	// ViewObject is a view: DROP VIEW, SHOW VIEWS.
	ViewObject
	// FunctionObject is a user-defined function: DROP FUNCTION, SHOW
	// FUNCTIONS.
	FunctionObject
)

// String is the keyword of the kind as written in SQL: TABLE, VIEW or
// FUNCTION.
func (k ObjectKind) String() string {
	return [...]string{"TABLE", "VIEW", "FUNCTION"}[k]
}

// Drop is DROP [TEMPORARY] TABLE|VIEW|FUNCTION [IF EXISTS] name.
type Drop struct {
	Pos
	Object              ObjectKind
	Temporary, IfExists bool
	Name                Name
}

// Insert is INSERT INTO|OVERWRITE table [PARTITION (k = v, …)] [(cols)] query.
type Insert struct {
	Pos
	Overwrite bool
	Table     Name
	// Partition is the static partition spec; values are literals.
	Partition []*PartitionValue
	Columns   []string
	Query     *Query
}

// PartitionValue is one `column = literal` of INSERT … PARTITION (…).
type PartitionValue struct {
	Pos
	Column string
	Value  Expr
}

// StatementSet is a group of INSERTs run as one job, written
// EXECUTE STATEMENT SET BEGIN …; END or BEGIN STATEMENT SET; …; END.
type StatementSet struct {
	Pos
	Inserts []*Insert
}

// ExplainDetail names an extra detail EXPLAIN prints.
type ExplainDetail string

// The details Flink's EXPLAIN accepts (ExplainDetail in Flink's Table API);
// each value is the keyword as written, upper-cased. The parser accepts all
// four, as Flink does; Weir's EXPLAIN prints only CHANGELOG_MODE and reads
// the others as no detail.
const (
	// ChangelogMode adds each operator's changelog mode: which RowKinds
	// (+I, -U, +U, -D) it produces.
	ChangelogMode ExplainDetail = "CHANGELOG_MODE"
	// EstimatedCost is Flink's optimizer cost per operator.
	EstimatedCost ExplainDetail = "ESTIMATED_COST"
	// JSONExecutionPlan is Flink's execution plan as JSON.
	JSONExecutionPlan ExplainDetail = "JSON_EXECUTION_PLAN"
	// PlanAdvice is Flink's planner advice on the plan (e.g. a missing
	// state TTL).
	PlanAdvice ExplainDetail = "PLAN_ADVICE"
)

// Explain is EXPLAIN [detail, …] followed by a query, an INSERT or a
// statement set.
type Explain struct {
	Pos
	Details []ExplainDetail
	Stmt    Statement // *Query, *Insert or *StatementSet
}

// Show is SHOW TABLES, SHOW VIEWS or SHOW FUNCTIONS.
type Show struct {
	Pos
	Object ObjectKind
}

// Describe is DESCRIBE name or DESC name.
type Describe struct {
	Pos
	Name Name
}

// ---------------------------------------------------------------- queries

// Query is a query: optional WITH, a body, ORDER BY, LIMIT and OFFSET. A
// query is also a statement (a bare SELECT).
type Query struct {
	Pos
	With    []*CTE
	Body    QueryBody
	OrderBy []*OrderItem
	Limit   Expr // nil if none
	Offset  Expr // nil if none
}

// CTE is one `name [(cols)] AS (query)` of a WITH clause.
type CTE struct {
	Pos
	Name    string
	Columns []string
	Query   *Query
}

// Select is SELECT … [FROM …] [WHERE …] [GROUP BY …] [HAVING …] [WINDOW …].
type Select struct {
	Pos
	Hints    []*Hint
	Distinct bool
	Items    []*SelectItem
	From     TableExpr // nil when there is no FROM
	Where    Expr
	GroupBy  []Expr
	Having   Expr
	Windows  []*NamedWindow
}

// SelectItem is `expr [AS alias]`; Expr is a *Star for * and t.*.
type SelectItem struct {
	Pos
	Expr  Expr
	Alias string
}

// NamedWindow is `name AS (spec)` of a WINDOW clause.
// NamedWindow is one `name AS (window spec)` of a query's WINDOW clause,
// which OVER name refers to.
type NamedWindow struct {
	Pos
	Name string
	Spec *WindowSpec
}

// SetOpKind is UNION, INTERSECT or EXCEPT.
type SetOpKind int

const (
	// Union is UNION: the rows of both sides (distinct unless ALL).
	Union SetOpKind = iota
	// Intersect is INTERSECT: the rows on both sides.
	Intersect
	// Except is EXCEPT: the left side's rows that are not on the right.
	Except
)

// String is the operator's keyword: UNION, INTERSECT or EXCEPT.
func (k SetOpKind) String() string { return [...]string{"UNION", "INTERSECT", "EXCEPT"}[k] }

// SetOp is `left UNION [ALL] right` (or INTERSECT, EXCEPT).
type SetOp struct {
	Pos
	Op          SetOpKind
	All         bool
	Left, Right QueryBody
}

// Values is VALUES (…), (…).
type Values struct {
	Pos
	Rows [][]Expr
}

// OrderItem is `expr [ASC|DESC] [NULLS FIRST|LAST]`.
type OrderItem struct {
	Pos
	Expr  Expr
	Desc  bool
	Nulls NullsOrder
}

// NullsOrder is the NULLS FIRST/LAST of an ORDER BY item.
type NullsOrder int

const (
	// NullsDefault is an ORDER BY item without NULLS FIRST/LAST: Flink
	// then puts NULLs first in ascending and last in descending order.
	NullsDefault NullsOrder = iota
	// NullsFirst is NULLS FIRST.
	NullsFirst
	// NullsLast is NULLS LAST.
	NullsLast
)

// String is the clause as written: "NULLS FIRST", "NULLS LAST", or "" for
// NullsDefault.
func (n NullsOrder) String() string { return [...]string{"", "NULLS FIRST", "NULLS LAST"}[n] }

// Hint is one hint of a /*+ … */ comment: NAME, NAME('k' = 'v', …) or
// NAME(a, b).
type Hint struct {
	Pos
	Name    string // upper-cased
	Options []*Option
	Args    []string
}

// ---------------------------------------------------------------- FROM items

// TableName is a table or view in FROM.
type TableName struct {
	Pos
	Name  Name
	Hints []*Hint
	// ForSystemTime is the `FOR SYSTEM_TIME AS OF expr` of a temporal or
	// lookup join, or nil.
	ForSystemTime Expr
	Alias         string
	Columns       []string // AS alias (cols)
}

// DerivedTable is a subquery in FROM: [LATERAL] (query) [[AS] alias [(cols)]].
type DerivedTable struct {
	Pos
	Lateral bool
	Query   *Query
	Alias   string
	Columns []string
}

// TableFunc is [LATERAL] TABLE(f(args)) [[AS] alias [(cols)]]: a window
// table-valued function (TUMBLE, HOP, CUMULATE, SESSION) or a user-defined
// table function.
type TableFunc struct {
	Pos
	Lateral bool
	Call    *FuncCall
	Alias   string
	Columns []string
}

// Unnest is UNNEST(expr, …) [WITH ORDINALITY] [[AS] alias [(cols)]].
type Unnest struct {
	Pos
	Exprs          []Expr
	WithOrdinality bool
	Alias          string
	Columns        []string
}

// JoinKind is the kind of a join.
type JoinKind int

const (
	// InnerJoin is [INNER] JOIN … ON|USING: matching rows only.
	InnerJoin JoinKind = iota
	// LeftJoin is LEFT [OUTER] JOIN: every left row, NULL-padded when
	// nothing on the right matches.
	LeftJoin
	// RightJoin is RIGHT [OUTER] JOIN: every right row, NULL-padded.
	RightJoin
	// FullJoin is FULL [OUTER] JOIN: every row of both sides, NULL-padded.
	FullJoin
	// CrossJoin is CROSS JOIN: every pair of rows, without a condition.
	CrossJoin
	// CommaJoin is `a, b`: a cross join written with a comma.
	CommaJoin
)

// String is the join as written between its sides: "JOIN", "LEFT JOIN", …,
// or "," for CommaJoin.
func (k JoinKind) String() string {
	return [...]string{"JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN", "CROSS JOIN", ","}[k]
}

// Join is `left kind JOIN right [ON cond | USING (cols)]`. Joins nest to the
// left: a JOIN b JOIN c is Join{Join{a, b}, c}.
type Join struct {
	Pos
	Kind        JoinKind
	Left, Right TableExpr
	On          Expr
	Using       []string
}

// ---------------------------------------------------------------- expressions

// Ident is a column reference, possibly qualified (t.col) or a path into a
// ROW (t.col.field). The planner decides which part is which.
type Ident struct {
	Pos
	Parts []string
}

// Star is * or t.* in a select list, or the * of COUNT(*).
type Star struct {
	Pos
	Qualifier []string
}

// NumberKind classifies numeric literals the way Flink types them.
type NumberKind int

const (
	// Integer is digits only: INT, or BIGINT when it does not fit.
	Integer NumberKind = iota
	// Exact has a decimal point: DECIMAL.
	Exact
	// Approx has an exponent: DOUBLE.
	Approx
)

// String is INTEGER, EXACT or APPROX.
func (k NumberKind) String() string { return [...]string{"INTEGER", "EXACT", "APPROX"}[k] }

// NumberLit is a numeric literal; Text is exactly as written (1.50 stays
// 1.50) so that decimals keep their scale.
type NumberLit struct {
	Pos
	Text string
	Kind NumberKind
}

// StringLit is a character string literal; Value is unescaped.
type StringLit struct {
	Pos
	Value string
}

// BoolLit is TRUE or FALSE.
type BoolLit struct {
	Pos
	Value bool
}

// NullLit is NULL.
type NullLit struct {
	Pos
}

// TypedLitKind is the type of a typed literal.
type TypedLitKind int

const (
	// DateLit is DATE 'yyyy-mm-dd': type DATE.
	DateLit TypedLitKind = iota
	// TimeLit is TIME 'hh:mm:ss[.fff]': type TIME(p), p the digits written.
	TimeLit
	// TimestampLit is TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.fff]': type
	// TIMESTAMP(p).
	TimestampLit
)

// String is the literal's keyword: DATE, TIME or TIMESTAMP.
func (k TypedLitKind) String() string { return [...]string{"DATE", "TIME", "TIMESTAMP"}[k] }

// TypedLit is DATE 'yyyy-mm-dd', TIME 'hh:mm:ss[.fff]' or
// TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.fff]'. The parser checks the format.
type TypedLit struct {
	Pos
	Kind  TypedLitKind
	Value string
}

// TimeUnit is a unit of an INTERVAL literal.
type TimeUnit int

// The units of an interval literal. YEAR and MONTH make a year-month
// interval (Flink's INTERVAL YEAR TO MONTH, a count of months); DAY to
// SECOND make a day-time interval (a duration in milliseconds).
const (
	// NoUnit is the absent To of an interval that is not a range.
	NoUnit TimeUnit = iota
	// Year is YEAR (or YEARS): 12 months.
	Year
	// Month is MONTH (or MONTHS).
	Month
	// Day is DAY (or DAYS): 24 hours.
	Day
	// Hour is HOUR (or HOURS).
	Hour
	// Minute is MINUTE (or MINUTES).
	Minute
	// Second is SECOND (or SECONDS), with up to 9 fractional digits in the
	// value; SECOND(p) sets the fractional precision.
	Second
)

// String is the unit's keyword (singular), or "" for NoUnit.
func (u TimeUnit) String() string {
	return [...]string{"", "YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND"}[u]
}

// IntervalLit is INTERVAL 'value' unit[(p)] [TO unit[(p)]], e.g.
// INTERVAL '5' MINUTE, INTERVAL '10' SECOND(3), INTERVAL '1 2:03' DAY TO
// MINUTE. Plural units (MINUTES) are read as singular. A precision of 0
// means none was written.
type IntervalLit struct {
	Pos
	Value         string
	From          TimeUnit
	FromPrecision int
	To            TimeUnit // NoUnit unless a range
	ToPrecision   int
}

// UnaryOp is a prefix operator.
type UnaryOp int

const (
	// Neg is arithmetic negation, -x.
	Neg UnaryOp = iota
	// Plus is unary plus, +x: x unchanged.
	Plus
	// Not is logical negation, NOT x, with SQL's three-valued logic (NOT
	// NULL is NULL).
	Not
)

// String is the operator as written: "-", "+" or "NOT".
func (o UnaryOp) String() string { return [...]string{"-", "+", "NOT"}[o] }

// Unary is -x, +x or NOT x.
type Unary struct {
	Pos
	Op UnaryOp
	X  Expr
}

// BinaryOp is an infix operator.
type BinaryOp int

// The binary operators, lowest precedence first: OR, AND, the comparisons,
// then + - and || , then * / %. Comparisons and logic follow SQL's
// three-valued logic: a NULL operand gives NULL (UNKNOWN), except as noted.
const (
	// Or is OR: TRUE if either side is TRUE.
	Or BinaryOp = iota
	// And is AND: FALSE if either side is FALSE.
	And
	// Eq is =.
	Eq
	Ne // <> and !=
	// Lt is <.
	Lt
	// Le is <=.
	Le
	// Gt is >.
	Gt
	// Ge is >=.
	Ge
	// IsDistinctFrom is IS DISTINCT FROM: <> that treats two NULLs as
	// equal and never gives NULL.
	IsDistinctFrom
	// IsNotDistinctFrom is IS NOT DISTINCT FROM: = that treats two NULLs
	// as equal and never gives NULL.
	IsNotDistinctFrom
	// Add is +: numbers, or a datetime plus an interval.
	Add
	// Sub is -: numbers, a datetime minus an interval.
	Sub
	// Mul is *.
	Mul
	// Div is /: for two integers, truncating toward zero, as Java's.
	Div
	// Mod is %: the remainder, with the sign of the dividend (MOD).
	Mod
	Concat // ||
)

// Swapped returns the comparison that holds for (b, a) when o holds for
// (a, b): < for >, >= for <=; any other operator itself.
func (o BinaryOp) Swapped() BinaryOp {
	switch o {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return o
}

// String is the operator as written ("OR", "=", "IS DISTINCT FROM", "||",
// …); Ne prints as "<>".
func (o BinaryOp) String() string {
	return [...]string{"OR", "AND", "=", "<>", "<", "<=", ">", ">=", "IS DISTINCT FROM",
		"IS NOT DISTINCT FROM", "+", "-", "*", "/", "%", "||"}[o]
}

// Binary is `l op r`; Pos is the operator's position.
type Binary struct {
	Pos
	Op   BinaryOp
	L, R Expr
}

// IsPredicate is what IS tests.
type IsPredicate int

const (
	// IsNull is IS NULL.
	IsNull IsPredicate = iota
	// IsTrue is IS TRUE: FALSE for FALSE and NULL, never NULL itself.
	IsTrue
	// IsFalse is IS FALSE: FALSE for TRUE and NULL.
	IsFalse
	// IsUnknown is IS UNKNOWN: a BOOLEAN that is NULL.
	IsUnknown
	// IsJSONValue … IsJSONObject are IS JSON [VALUE|SCALAR|ARRAY|OBJECT]
	// (IS JSON is IS JSON VALUE).
	IsJSONValue
	// IsJSONScalar is IS JSON SCALAR: a string, number, boolean or null.
	IsJSONScalar
	// IsJSONArray is IS JSON ARRAY.
	IsJSONArray
	// IsJSONObject is IS JSON OBJECT.
	IsJSONObject
)

// String is what follows IS [NOT]: "NULL", "TRUE", …, "JSON OBJECT".
func (p IsPredicate) String() string {
	return [...]string{"NULL", "TRUE", "FALSE", "UNKNOWN", "JSON VALUE", "JSON SCALAR", "JSON ARRAY", "JSON OBJECT"}[p]
}

// Is is `x IS [NOT] NULL|TRUE|FALSE|UNKNOWN|JSON [kind]`.
type Is struct {
	Pos
	X    Expr
	Not  bool
	What IsPredicate
}

// Between is `x [NOT] BETWEEN lo AND hi`.
type Between struct {
	Pos
	X, Lo, Hi Expr
	Not       bool
}

// Like is `x [NOT] LIKE|SIMILAR TO pattern [ESCAPE esc]`.
type Like struct {
	Pos
	X, Pattern Expr
	Escape     Expr // nil if none
	Not        bool
	Similar    bool
}

// InList is `x [NOT] IN (a, b, …)`.
type InList struct {
	Pos
	X    Expr
	List []Expr
	Not  bool
}

// InQuery is `x [NOT] IN (subquery)`.
type InQuery struct {
	Pos
	X     Expr
	Query *Query
	Not   bool
}

// Exists is EXISTS (subquery).
type Exists struct {
	Pos
	Query *Query
}

// Subquery is a scalar subquery (query) used as an expression.
type Subquery struct {
	Pos
	Query *Query
}

// When is one WHEN cond THEN result of a CASE.
type When struct {
	Pos
	Cond, Result Expr
}

// Case is CASE [operand] WHEN … THEN … [ELSE …] END.
type Case struct {
	Pos
	Operand Expr // nil for a searched CASE
	Whens   []*When
	Else    Expr // nil if none
}

// Cast is CAST(x AS type), or TRY_CAST when Try.
type Cast struct {
	Pos
	X    Expr
	Type types.Type
	Try  bool
}

// FuncCall is a function call. Name is upper-cased (Flink's function names
// are case-insensitive). COUNT(*) has a single *Star argument. The special
// forms are read into ordinary arguments:
//
//	EXTRACT(unit FROM x)            EXTRACT(Keyword, x)
//	FLOOR(x TO unit), CEIL(…)       FLOOR(x, Keyword)
//	POSITION(a IN b)                POSITION(a, b)
//	SUBSTRING(s FROM i [FOR n])     SUBSTRING(s, i[, n])
//	TRIM([BOTH|…] [c] FROM s)       TRIM(Keyword, c, s)
//	TIMESTAMPADD(unit, n, t)        TIMESTAMPADD(Keyword, n, t)
//	CURRENT_TIMESTAMP               CURRENT_TIMESTAMP, no Args
//	ROW(a, b) and (a, b)            ROW(a, b)
//
// Window table functions take *TableArg, *Descriptor and *NamedArg
// arguments.
type FuncCall struct {
	Pos
	Name     string
	Distinct bool
	Args     []Expr
	Filter   Expr        // FILTER (WHERE cond), or nil
	Over     *WindowSpec // OVER (…) or OVER w, or nil
}

// Keyword is a bare keyword argument of a special function form: a time
// unit (DAY) or a TRIM side (BOTH). Word is upper-cased.
type Keyword struct {
	Pos
	Word string
}

// TableArg is `TABLE name [PARTITION BY keys]`, the table argument of a
// window table-valued function.
type TableArg struct {
	Pos
	Name        Name
	PartitionBy []Expr
}

// Descriptor is DESCRIPTOR(col, …), naming the time column of a window
// table-valued function.
type Descriptor struct {
	Pos
	Columns []string
}

// NamedArg is `name => value`, e.g. SIZE => INTERVAL '5' MINUTE.
type NamedArg struct {
	Pos
	Name  string // upper-cased
	Value Expr
}

// ArrayCtor is ARRAY[a, b, …].
type ArrayCtor struct {
	Pos
	Elems []Expr
}

// MapCtor is MAP[k1, v1, k2, v2, …]; Elems alternate keys and values.
type MapCtor struct {
	Pos
	Elems []Expr
}

// FieldAccess is x.field where x is not a plain name (f(y).field,
// a[1].field); a.b.c is an *Ident.
type FieldAccess struct {
	Pos
	X     Expr
	Field string
}

// Index is x[i]: an array element (1-based) or a map value.
type Index struct {
	Pos
	X, Index Expr
}

// WindowSpec is the window of an OVER clause.
type WindowSpec struct {
	Pos
	// Ref names a window of the WINDOW clause: OVER w. The other fields are
	// then empty.
	Ref         string
	PartitionBy []Expr
	OrderBy     []*OrderItem
	Frame       *Frame // nil if none
}

// FrameUnit is ROWS or RANGE.
type FrameUnit int

const (
	// Rows is ROWS: the frame's offsets count rows.
	Rows FrameUnit = iota
	// Range is RANGE: the frame's offsets are distances in the ORDER BY
	// value (an INTERVAL over a time attribute, as Flink's OVER windows).
	Range
)

// String is ROWS or RANGE.
func (u FrameUnit) String() string { return [...]string{"ROWS", "RANGE"}[u] }

// Frame is `ROWS|RANGE BETWEEN start AND end`. A frame written with one
// bound (ROWS 10 PRECEDING) ends at CURRENT ROW.
type Frame struct {
	Pos
	Unit       FrameUnit
	Start, End FrameBound
}

// BoundKind is the kind of a frame bound.
type BoundKind int

const (
	// UnboundedPreceding is UNBOUNDED PRECEDING: the partition's first row.
	UnboundedPreceding BoundKind = iota
	// Preceding is `offset PRECEDING`: offset rows (ROWS) or the offset's
	// distance (RANGE) before the current row.
	Preceding
	// CurrentRow is CURRENT ROW (with RANGE, its peers too).
	CurrentRow
	// Following is `offset FOLLOWING`. Flink's streaming OVER windows
	// support only frames that end at CURRENT ROW; the planner says so.
	Following
	// UnboundedFollowing is UNBOUNDED FOLLOWING: the partition's last row.
	UnboundedFollowing
)

// String is the bound as written, without its offset: "UNBOUNDED
// PRECEDING", "PRECEDING", "CURRENT ROW", ….
func (k BoundKind) String() string {
	return [...]string{"UNBOUNDED PRECEDING", "PRECEDING", "CURRENT ROW", "FOLLOWING", "UNBOUNDED FOLLOWING"}[k]
}

// FrameBound is one end of a window frame; Offset is set for Preceding and
// Following (a row count or an INTERVAL).
type FrameBound struct {
	Kind   BoundKind
	Offset Expr
}

func (*SetStmt) stmtNode()        {}
func (*ResetStmt) stmtNode()      {}
func (*CreateTable) stmtNode()    {}
func (*CreateView) stmtNode()     {}
func (*CreateFunction) stmtNode() {}
func (*Drop) stmtNode()           {}
func (*Insert) stmtNode()         {}
func (*StatementSet) stmtNode()   {}
func (*Explain) stmtNode()        {}
func (*Show) stmtNode()           {}
func (*Describe) stmtNode()       {}
func (*Query) stmtNode()          {}

func (*Select) bodyNode() {}
func (*SetOp) bodyNode()  {}
func (*Values) bodyNode() {}
func (*Query) bodyNode()  {}

func (*TableName) tableNode()    {}
func (*DerivedTable) tableNode() {}
func (*TableFunc) tableNode()    {}
func (*Unnest) tableNode()       {}
func (*Join) tableNode()         {}

func (*Ident) exprNode()       {}
func (*Star) exprNode()        {}
func (*NumberLit) exprNode()   {}
func (*StringLit) exprNode()   {}
func (*BoolLit) exprNode()     {}
func (*NullLit) exprNode()     {}
func (*TypedLit) exprNode()    {}
func (*IntervalLit) exprNode() {}
func (*Unary) exprNode()       {}
func (*Binary) exprNode()      {}
func (*Is) exprNode()          {}
func (*Between) exprNode()     {}
func (*Like) exprNode()        {}
func (*InList) exprNode()      {}
func (*InQuery) exprNode()     {}
func (*Exists) exprNode()      {}
func (*Subquery) exprNode()    {}
func (*Case) exprNode()        {}
func (*Cast) exprNode()        {}
func (*FuncCall) exprNode()    {}
func (*Keyword) exprNode()     {}
func (*TableArg) exprNode()    {}
func (*Descriptor) exprNode()  {}
func (*NamedArg) exprNode()    {}
func (*ArrayCtor) exprNode()   {}
func (*MapCtor) exprNode()     {}
func (*FieldAccess) exprNode() {}
func (*Index) exprNode()       {}
