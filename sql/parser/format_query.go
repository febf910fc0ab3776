package parser

import "strings"

func (f *formatter) query(q *Query) {
	if q.With != nil {
		f.WriteString("WITH ")
		for i, c := range q.With {
			if i > 0 {
				f.WriteString(", ")
			}
			f.cte(c)
		}
		f.WriteString(" ")
	}
	f.body(q.Body)
	if q.OrderBy != nil {
		f.WriteString(" ORDER BY ")
		f.orderItems(q.OrderBy)
	}
	if q.Limit != nil {
		f.WriteString(" LIMIT ")
		f.expr(q.Limit, 0)
	}
	if q.Offset != nil {
		f.WriteString(" OFFSET ")
		f.expr(q.Offset, 0)
	}
}

func (f *formatter) cte(c *CTE) {
	f.WriteString(quoteIdent(c.Name))
	if c.Columns != nil {
		f.WriteString(" ")
		f.identList(c.Columns)
	}
	f.WriteString(" AS (")
	f.query(c.Query)
	f.WriteString(")")
}

func (f *formatter) body(b QueryBody) {
	switch b := b.(type) {
	case *Select:
		f.selectBody(b)
	case *Values:
		f.WriteString("VALUES ")
		for i, row := range b.Rows {
			if i > 0 {
				f.WriteString(", ")
			}
			f.WriteString("(")
			f.exprList(row)
			f.WriteString(")")
		}
	case *SetOp:
		left, _ := b.Left.(*SetOp)
		f.setOperand(b.Left, left != nil && b.Op == Intersect && left.Op != Intersect)
		f.WriteString(" " + b.Op.String() + " ")
		if b.All {
			f.WriteString("ALL ")
		}
		right, _ := b.Right.(*SetOp)
		f.setOperand(b.Right, right != nil && !(b.Op != Intersect && right.Op == Intersect))
	case *Query:
		f.WriteString("(")
		f.query(b)
		f.WriteString(")")
	}
}

// setOperand prints an operand of a set operation, in parentheses when a
// set operation there would otherwise regroup: on the right, any but an
// INTERSECT under UNION or EXCEPT (they nest to the left, INTERSECT binding
// tighter); on the left, UNION or EXCEPT under INTERSECT.
func (f *formatter) setOperand(b QueryBody, paren bool) {
	if paren {
		f.WriteString("(")
		f.body(b)
		f.WriteString(")")
		return
	}
	f.body(b)
}

func (f *formatter) selectBody(s *Select) {
	f.WriteString("SELECT ")
	if s.Hints != nil {
		f.hints(s.Hints)
		f.WriteString(" ")
	}
	if s.Distinct {
		f.WriteString("DISTINCT ")
	}
	for i, it := range s.Items {
		if i > 0 {
			f.WriteString(", ")
		}
		f.selectItem(it)
	}
	if s.From != nil {
		f.WriteString(" FROM ")
		f.table(s.From)
	}
	if s.Where != nil {
		f.WriteString(" WHERE ")
		f.expr(s.Where, 0)
	}
	if s.GroupBy != nil {
		f.WriteString(" GROUP BY ")
		f.exprList(s.GroupBy)
	}
	if s.Having != nil {
		f.WriteString(" HAVING ")
		f.expr(s.Having, 0)
	}
	for i, w := range s.Windows {
		if i == 0 {
			f.WriteString(" WINDOW ")
		} else {
			f.WriteString(", ")
		}
		f.WriteString(quoteIdent(w.Name) + " AS ")
		f.windowSpec(w.Spec)
	}
}

func (f *formatter) selectItem(it *SelectItem) {
	f.expr(it.Expr, 0)
	if it.Alias != "" {
		f.WriteString(" AS " + quoteIdent(it.Alias))
	}
}

func (f *formatter) orderItems(items []*OrderItem) {
	for i, o := range items {
		if i > 0 {
			f.WriteString(", ")
		}
		f.orderItem(o)
	}
}

func (f *formatter) orderItem(o *OrderItem) {
	f.expr(o.Expr, 0)
	if o.Desc {
		f.WriteString(" DESC")
	}
	switch o.Nulls {
	case NullsFirst:
		f.WriteString(" NULLS FIRST")
	case NullsLast:
		f.WriteString(" NULLS LAST")
	}
}

func (f *formatter) hints(hs []*Hint) {
	f.WriteString("/*+ ")
	for i, h := range hs {
		if i > 0 {
			f.WriteString(", ")
		}
		f.WriteString(quoteIdent(h.Name))
		switch {
		case h.Options != nil:
			f.WriteString("(")
			for j, o := range h.Options {
				if j > 0 {
					f.WriteString(", ")
				}
				f.option(o)
			}
			f.WriteString(")")
		case h.Args != nil:
			// A plain word prints bare; anything else as a string literal,
			// which hints accept alike.
			f.WriteString("(")
			for j, a := range h.Args {
				if j > 0 {
					f.WriteString(", ")
				}
				if isSimpleIdent(a) && !isKeyword(strings.ToUpper(a)) {
					f.WriteString(a)
				} else {
					f.WriteString(quoteString(a))
				}
			}
			f.WriteString(")")
		}
	}
	f.WriteString(" */")
}

// ---------------------------------------------------------------- FROM

func (f *formatter) table(t TableExpr) {
	switch t := t.(type) {
	case *TableName:
		f.WriteString(formatName(t.Name))
		if t.Hints != nil {
			f.WriteString(" ")
			f.hints(t.Hints)
		}
		if t.ForSystemTime != nil {
			f.WriteString(" FOR SYSTEM_TIME AS OF ")
			f.expr(t.ForSystemTime, 0)
		}
		f.alias(t.Alias, t.Columns)
	case *DerivedTable:
		if t.Lateral {
			f.WriteString("LATERAL ")
		}
		f.WriteString("(")
		f.query(t.Query)
		f.WriteString(")")
		f.alias(t.Alias, t.Columns)
	case *TableFunc:
		if t.Lateral {
			f.WriteString("LATERAL ")
		}
		f.WriteString("TABLE(")
		f.expr(t.Call, 0)
		f.WriteString(")")
		f.alias(t.Alias, t.Columns)
	case *Unnest:
		f.WriteString("UNNEST(")
		f.exprList(t.Exprs)
		f.WriteString(")")
		if t.WithOrdinality {
			f.WriteString(" WITH ORDINALITY")
		}
		f.alias(t.Alias, t.Columns)
	case *Join:
		f.join(t)
	case *MatchRecognize:
		f.matchRecognize(t)
	}
}

func (f *formatter) join(j *Join) {
	f.table(j.Left)
	if j.Kind == CommaJoin {
		f.WriteString(", ")
	} else {
		f.WriteString(" " + j.Kind.String() + " ")
	}
	if _, nested := j.Right.(*Join); nested {
		f.WriteString("(")
		f.table(j.Right)
		f.WriteString(")")
	} else {
		f.table(j.Right)
	}
	if j.On != nil {
		f.WriteString(" ON ")
		f.expr(j.On, 0)
	}
	if j.Using != nil {
		f.WriteString(" USING ")
		f.identList(j.Using)
	}
}

func (f *formatter) alias(alias string, cols []string) {
	if alias == "" {
		return
	}
	f.WriteString(" AS " + quoteIdent(alias))
	if cols != nil {
		f.WriteString(" ")
		f.identList(cols)
	}
}

// ---------------------------------------------------------------- windows

func (f *formatter) windowSpec(w *WindowSpec) {
	if w.Ref != "" {
		f.WriteString(quoteIdent(w.Ref))
		return
	}
	f.WriteString("(")
	sep := ""
	if w.PartitionBy != nil {
		f.WriteString("PARTITION BY ")
		f.exprList(w.PartitionBy)
		sep = " "
	}
	if w.OrderBy != nil {
		f.WriteString(sep + "ORDER BY ")
		f.orderItems(w.OrderBy)
		sep = " "
	}
	if fr := w.Frame; fr != nil {
		f.WriteString(sep + fr.Unit.String() + " BETWEEN ")
		f.bound(fr.Start)
		f.WriteString(" AND ")
		f.bound(fr.End)
	}
	f.WriteString(")")
}

func (f *formatter) bound(b FrameBound) {
	switch b.Kind {
	case UnboundedPreceding:
		f.WriteString("UNBOUNDED PRECEDING")
	case UnboundedFollowing:
		f.WriteString("UNBOUNDED FOLLOWING")
	case CurrentRow:
		f.WriteString("CURRENT ROW")
	case Preceding:
		f.expr(b.Offset, precAdditive)
		f.WriteString(" PRECEDING")
	case Following:
		f.expr(b.Offset, precAdditive)
		f.WriteString(" FOLLOWING")
	}
}
