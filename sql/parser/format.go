package parser

import (
	"fmt"
	"strings"

	"github.com/weirstream/weir/types"
)

// Format prints a node as canonical SQL on one line: keywords upper-case,
// identifiers quoted only when they must be (a keyword, or not a plain
// word), the fewest parentheses that keep the tree's shape, and one
// spelling for each construct (INNER JOIN as JOIN, <> for !=, a one-bound
// window frame as BETWEEN … AND CURRENT ROW, …). Parsing the output gives
// back the same tree, positions aside.
func Format(n Node) string {
	var f formatter
	f.node(n)
	return f.String()
}

// FormatScript prints statements one per line, each ending with ';'.
func FormatScript(stmts []Statement) string {
	var b strings.Builder
	for _, s := range stmts {
		b.WriteString(Format(s))
		b.WriteString(";\n")
	}
	return b.String()
}

// FormatType prints a data type in the syntax ParseType reads.
func FormatType(t types.Type) string {
	var f formatter
	f.typ(t)
	return f.String()
}

type formatter struct {
	strings.Builder
	// fullParens parenthesizes every operator expression; tests use it to
	// show how an expression was grouped.
	fullParens bool
}

func (f *formatter) printf(format string, args ...any) { fmt.Fprintf(f, format, args...) }

func (f *formatter) node(n Node) {
	switch n := n.(type) {
	case Statement:
		f.stmt(n)
	case Expr:
		f.expr(n, 0)
	case TableExpr:
		f.table(n)
	case QueryBody:
		f.body(n)
	case *SelectItem:
		f.selectItem(n)
	case *OrderItem:
		f.orderItem(n)
	case *WindowSpec:
		f.windowSpec(n)
	case *ColumnDef:
		f.column(n)
	case *CTE:
		f.cte(n)
	case *When:
		f.WriteString("WHEN ")
		f.expr(n.Cond, 0)
		f.WriteString(" THEN ")
		f.expr(n.Result, 0)
	case *Option:
		f.option(n)
	case *Watermark:
		f.watermark(n)
	case *PrimaryKey:
		f.primaryKey(n)
	case *Hint:
		f.hints([]*Hint{n})
	case nil:
	default:
		f.printf("<%T>", n)
	}
}

// ---------------------------------------------------------------- names

// isSimpleIdent reports whether s lexes as one unquoted word.
func isSimpleIdent(s string) bool {
	for i, r := range s {
		if i == 0 && !isIdentStart(r) || i > 0 && !isIdentPart(r) {
			return false
		}
	}
	return s != ""
}

func quoteIdent(s string) string {
	if isSimpleIdent(s) && !isKeyword(strings.ToUpper(s)) {
		return s
	}
	return "`" + strings.ReplaceAll(s, "`", "``") + "`"
}

func quoteString(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func formatName(n []string) string {
	parts := make([]string, len(n))
	for i, s := range n {
		parts[i] = quoteIdent(s)
	}
	return strings.Join(parts, ".")
}

func (f *formatter) identList(names []string) {
	f.WriteString("(")
	for i, n := range names {
		if i > 0 {
			f.WriteString(", ")
		}
		f.WriteString(quoteIdent(n))
	}
	f.WriteString(")")
}

// ---------------------------------------------------------------- statements

func (f *formatter) stmt(s Statement) {
	switch s := s.(type) {
	case *Query:
		f.query(s)
	case *SetStmt:
		f.WriteString("SET")
		if s.Key != "" || s.Value != "" {
			f.printf(" %s = %s", quoteString(s.Key), quoteString(s.Value))
		}
	case *ResetStmt:
		f.WriteString("RESET")
		if s.Key != "" {
			f.WriteString(" " + quoteString(s.Key))
		}
	case *CreateTable:
		f.createTable(s)
	case *CreateView:
		f.createPrefix(s.Temporary, false, "VIEW", s.IfNotExists, s.Name)
		if s.Columns != nil {
			f.WriteString(" ")
			f.identList(s.Columns)
		}
		f.WriteString(" AS ")
		f.query(s.Query)
	case *CreateFunction:
		f.createPrefix(s.Temporary, s.System, "FUNCTION", s.IfNotExists, s.Name)
		f.WriteString(" AS " + quoteString(s.Class))
		if s.Language != "" {
			f.WriteString(" LANGUAGE " + s.Language)
		}
		if s.Using != "" {
			f.WriteString(" USING JAR " + quoteString(s.Using))
		}
	case *Drop:
		f.WriteString("DROP ")
		if s.Temporary {
			f.WriteString("TEMPORARY ")
		}
		f.WriteString(s.Object.String() + " ")
		if s.IfExists {
			f.WriteString("IF EXISTS ")
		}
		f.WriteString(formatName(s.Name))
	case *Insert:
		f.insert(s)
	case *StatementSet:
		f.WriteString("EXECUTE STATEMENT SET BEGIN ")
		for _, ins := range s.Inserts {
			f.insert(ins)
			f.WriteString("; ")
		}
		f.WriteString("END")
	case *Explain:
		f.WriteString("EXPLAIN ")
		for i, d := range s.Details {
			if i > 0 {
				f.WriteString(", ")
			}
			f.WriteString(string(d))
		}
		if len(s.Details) > 0 {
			f.WriteString(" ")
		}
		f.stmt(s.Stmt)
	case *Show:
		f.WriteString("SHOW " + s.Object.String() + "S")
	case *Describe:
		f.WriteString("DESCRIBE " + formatName(s.Name))
	default:
		f.printf("<%T>", s)
	}
}

func (f *formatter) createPrefix(temporary, system bool, what string, ifNotExists bool, name Name) {
	f.WriteString("CREATE ")
	if temporary {
		f.WriteString("TEMPORARY ")
	}
	if system {
		f.WriteString("SYSTEM ")
	}
	f.WriteString(what + " ")
	if ifNotExists {
		f.WriteString("IF NOT EXISTS ")
	}
	f.WriteString(formatName(name))
}

func (f *formatter) createTable(s *CreateTable) {
	f.createPrefix(s.Temporary, false, "TABLE", s.IfNotExists, s.Name)
	if s.Columns != nil || s.Watermark != nil || s.PrimaryKey != nil {
		f.WriteString(" (")
		sep := ""
		for _, c := range s.Columns {
			f.WriteString(sep)
			f.column(c)
			sep = ", "
		}
		if s.Watermark != nil {
			f.WriteString(sep)
			f.watermark(s.Watermark)
			sep = ", "
		}
		if s.PrimaryKey != nil {
			f.WriteString(sep)
			f.primaryKey(s.PrimaryKey)
		}
		f.WriteString(")")
	}
	if s.Comment != "" {
		f.WriteString(" COMMENT " + quoteString(s.Comment))
	}
	if s.PartitionedBy != nil {
		f.WriteString(" PARTITIONED BY ")
		f.identList(s.PartitionedBy)
	}
	if s.Options != nil {
		f.WriteString(" WITH (")
		for i, o := range s.Options {
			if i > 0 {
				f.WriteString(", ")
			}
			f.option(o)
		}
		f.WriteString(")")
	}
	if s.AsQuery != nil {
		f.WriteString(" AS ")
		f.query(s.AsQuery)
	}
}

func (f *formatter) watermark(w *Watermark) {
	f.WriteString("WATERMARK FOR " + quoteIdent(w.Column) + " AS ")
	f.expr(w.Expr, 0)
}

func (f *formatter) primaryKey(pk *PrimaryKey) {
	if pk.Constraint != "" {
		f.WriteString("CONSTRAINT " + quoteIdent(pk.Constraint) + " ")
	}
	f.WriteString("PRIMARY KEY ")
	f.identList(pk.Columns)
	f.WriteString(" NOT ENFORCED")
}

func (f *formatter) option(o *Option) {
	f.printf("%s = %s", quoteString(o.Key), quoteString(o.Value))
}

func (f *formatter) column(c *ColumnDef) {
	f.WriteString(quoteIdent(c.Name))
	switch c.Kind {
	case ComputedColumn:
		f.WriteString(" AS ")
		f.expr(c.Expr, 0)
	default:
		f.WriteString(" ")
		f.typ(c.Type)
		if c.Kind == MetadataColumn {
			f.WriteString(" METADATA")
			if c.MetadataKey != "" {
				f.WriteString(" FROM " + quoteString(c.MetadataKey))
			}
			if c.Virtual {
				f.WriteString(" VIRTUAL")
			}
		}
	}
	if c.Comment != "" {
		f.WriteString(" COMMENT " + quoteString(c.Comment))
	}
}

func (f *formatter) insert(s *Insert) {
	if s.Overwrite {
		f.WriteString("INSERT OVERWRITE ")
	} else {
		f.WriteString("INSERT INTO ")
	}
	f.WriteString(formatName(s.Table))
	if s.Partition != nil {
		f.WriteString(" PARTITION (")
		for i, pv := range s.Partition {
			if i > 0 {
				f.WriteString(", ")
			}
			f.WriteString(quoteIdent(pv.Column) + " = ")
			f.expr(pv.Value, precUnary)
		}
		f.WriteString(")")
	}
	if s.Columns != nil {
		f.WriteString(" ")
		f.identList(s.Columns)
	}
	f.WriteString(" ")
	f.query(s.Query)
}

// ---------------------------------------------------------------- types

func (f *formatter) typ(t types.Type) {
	switch t.Kind {
	case types.Decimal:
		f.printf("DECIMAL(%d, %d)", t.Precision, t.Scale)
	case types.Char, types.Varchar, types.Timestamp, types.TimestampLTZ, types.Time:
		f.printf("%s(%d)", t.Kind, t.Precision)
	case types.Array, types.Multiset:
		f.WriteString(t.Kind.String() + "<")
		f.typ(*t.Elem)
		f.WriteString(">")
	case types.Map:
		f.WriteString("MAP<")
		f.typ(*t.Key)
		f.WriteString(", ")
		f.typ(*t.Elem)
		f.WriteString(">")
	case types.Row:
		f.WriteString("ROW<")
		for i, fl := range t.Fields {
			if i > 0 {
				f.WriteString(", ")
			}
			f.WriteString(quoteIdent(fl.Name) + " ")
			f.typ(fl.Type)
		}
		f.WriteString(">")
	default:
		f.WriteString(t.Kind.String())
	}
	if !t.Nullable {
		f.WriteString(" NOT NULL")
	}
}
