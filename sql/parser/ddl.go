package parser

import (
	"fmt"
	"strings"
)

func (p *parser) parseCreate() Statement {
	pos := p.next().pos
	temporary := p.acceptWord("TEMPORARY")
	system := temporary && p.acceptWord("SYSTEM")
	switch {
	case p.isWord("TABLE") && !system:
		p.next()
		return p.parseCreateTable(pos, temporary)
	case p.isWord("VIEW") && !system:
		p.next()
		return p.parseCreateView(pos, temporary)
	case p.isWord("FUNCTION"):
		p.next()
		return p.parseCreateFunction(pos, temporary, system)
	}
	hint := ""
	if t := p.cur(); t.kind == tIdent {
		if kw, ok := closest(t.text, []string{"TABLE", "VIEW", "FUNCTION", "TEMPORARY"}); ok {
			hint = "did you mean " + kw + "?"
		} else if t.upper == "DATABASE" || t.upper == "CATALOG" {
			p.fail(t.pos, "", "CREATE %s is not supported", t.upper)
		}
	}
	p.failExpected("TABLE, VIEW or FUNCTION after CREATE", hint)
	return nil
}

func (p *parser) acceptIfNotExists() bool {
	return p.acceptWords("IF", "NOT", "EXISTS")
}

func (p *parser) parseCreateTable(pos Pos, temporary bool) *CreateTable {
	ct := &CreateTable{Pos: pos, Temporary: temporary}
	ct.IfNotExists = p.acceptIfNotExists()
	ct.Name = p.parseName("table name")
	if p.isPunct("(") {
		p.parseTableElements(ct)
	}
	if p.acceptWord("COMMENT") {
		ct.Comment = p.parseString("table comment")
	}
	if p.acceptWord("PARTITIONED") {
		p.expectWord("BY")
		ct.PartitionedBy = p.parseIdentList("partition column")
	}
	if p.isWord("WITH") {
		ct.Options = p.parseOptions()
	}
	if t := p.cur(); p.isWord("LIKE") {
		p.fail(t.pos, "", "CREATE TABLE … LIKE is not supported")
	}
	if p.acceptWord("AS") {
		ct.AsQuery = p.parseQuery()
	}
	if ct.Columns == nil && ct.AsQuery == nil {
		p.failExpected(fmt.Sprintf("a column list, or AS query, for table %s", formatName(ct.Name)), "")
	}
	p.checkTable(ct)
	return ct
}

// parseTableElements reads the parenthesized columns, watermark and
// constraints of CREATE TABLE, in any order.
func (p *parser) parseTableElements(ct *CreateTable) {
	open := p.next().pos
	for {
		if p.isPunct(")") {
			hint := ""
			if p.isPunctAt(-1, ",") {
				hint = "remove the trailing ','"
			}
			p.fail(p.cur().pos, hint, "expected a column definition, found ')'")
		}
		p.parseTableElement(ct)
		if p.acceptPunct(",") {
			continue
		}
		if p.isPunct(")") {
			p.next()
			return
		}
		if t := p.cur(); isIdentTok(t) && ct.Columns != nil {
			last := ct.Columns[len(ct.Columns)-1].Name
			p.fail(t.pos, "missing ',' between columns?",
				"expected ',' or ')' after column '%s', found %s", last, t.describe())
		}
		p.failExpected(fmt.Sprintf("')' to close the column list opened at line %s", open), "")
	}
}

func (p *parser) parseTableElement(ct *CreateTable) {
	t := p.cur()
	switch {
	case p.isWord("WATERMARK") && p.isWordAt(1, "FOR"):
		if ct.Watermark != nil {
			p.fail(t.pos, "", "only one WATERMARK per table (the first is at line %s)", ct.Watermark.Pos)
		}
		p.next()
		p.next()
		w := &Watermark{Pos: t.pos}
		colPos := p.cur().pos
		w.Column = p.parseIdent("rowtime column name")
		if p.isPunct(".") {
			p.fail(p.cur().pos, "", "WATERMARK must reference a top-level column of the table")
		}
		p.expectWord("AS")
		w.Expr = p.parseExpr()
		w.Pos = colPos
		ct.Watermark = w
	case p.isWord("PRIMARY") && p.isWordAt(1, "KEY"), p.isWord("CONSTRAINT") && isIdentTok(p.peek(1)) && p.isWordAt(2, "PRIMARY"):
		p.setPrimaryKey(ct, p.parsePrimaryKey(false, ""))
	default:
		p.parseColumn(ct)
	}
}

// parsePrimaryKey reads [CONSTRAINT name] PRIMARY KEY [(cols)] NOT ENFORCED.
// Inline (on a column) there is no column list.
func (p *parser) parsePrimaryKey(inline bool, column string) *PrimaryKey {
	pk := &PrimaryKey{Pos: p.cur().pos}
	if p.acceptWord("CONSTRAINT") {
		pk.Constraint = p.parseIdent("constraint name")
	}
	p.expectWord("PRIMARY")
	p.expectWord("KEY")
	if inline {
		pk.Columns = []string{column}
	} else {
		pk.Columns = p.parseIdentList("primary key column")
	}
	if !p.acceptWords("NOT", "ENFORCED") {
		t := p.cur()
		p.fail(t.pos, "Flink does not own the data, so it cannot enforce the key: write PRIMARY KEY (…) NOT ENFORCED",
			"PRIMARY KEY must be declared NOT ENFORCED, found %s", t.describe())
	}
	return pk
}

func (p *parser) setPrimaryKey(ct *CreateTable, pk *PrimaryKey) {
	if ct.PrimaryKey != nil {
		p.fail(pk.Pos, "", "only one PRIMARY KEY per table (the first is at line %s)", ct.PrimaryKey.Pos)
	}
	ct.PrimaryKey = pk
}

func (p *parser) parseColumn(ct *CreateTable) {
	c := &ColumnDef{Pos: p.cur().pos}
	c.Name = p.parseIdent("column name")
	if p.acceptWord("AS") {
		c.Kind = ComputedColumn
		c.Expr = p.parseExpr()
	} else {
		c.Type = p.parseType()
		if p.acceptWord("METADATA") {
			c.Kind = MetadataColumn
			if p.acceptWord("FROM") {
				c.MetadataKey = p.parseString("metadata key")
			}
			c.Virtual = p.acceptWord("VIRTUAL")
		}
		if p.isWord("PRIMARY") || p.isWord("CONSTRAINT") {
			p.setPrimaryKey(ct, p.parsePrimaryKey(true, c.Name))
		}
	}
	if p.acceptWord("COMMENT") {
		c.Comment = p.parseString("column comment")
	}
	ct.Columns = append(ct.Columns, c)
}

// checkTable validates what refers to columns within CREATE TABLE: the
// watermark, the primary key and the partition keys.
func (p *parser) checkTable(ct *CreateTable) {
	if ct.Columns == nil {
		return
	}
	byName := map[string]*ColumnDef{}
	var names []string
	for _, c := range ct.Columns {
		if prev, dup := byName[c.Name]; dup {
			p.fail(c.Pos, "", "duplicate column '%s' (first declared at line %s)", c.Name, prev.Pos)
		}
		byName[c.Name] = c
		names = append(names, c.Name)
	}
	if w := ct.Watermark; w != nil && byName[w.Column] == nil {
		p.fail(w.Pos, columnHint(w.Column, names),
			"WATERMARK must reference a column of the table, but '%s' is not one", w.Column)
	}
	if pk := ct.PrimaryKey; pk != nil {
		seen := map[string]bool{}
		for _, col := range pk.Columns {
			c := byName[col]
			switch {
			case c == nil:
				p.fail(pk.Pos, columnHint(col, names), "PRIMARY KEY column '%s' is not a column of the table", col)
			case c.Kind != PhysicalColumn:
				p.fail(pk.Pos, "", "PRIMARY KEY column '%s' must be a physical column, not a computed or metadata one", col)
			case seen[col]:
				p.fail(pk.Pos, "", "PRIMARY KEY lists column '%s' twice", col)
			}
			seen[col] = true
		}
	}
	for _, col := range ct.PartitionedBy {
		if byName[col] == nil {
			p.fail(ct.Pos, columnHint(col, names), "PARTITIONED BY column '%s' is not a column of the table", col)
		}
	}
}

// columnHint suggests the column the user probably meant.
func columnHint(name string, names []string) string {
	if c, ok := closest(name, names); ok {
		return "did you mean `" + c + "`?"
	}
	return "the columns are " + strings.Join(names, ", ")
}

// parseOptions reads WITH ('key' = 'value', …).
func (p *parser) parseOptions() []*Option {
	p.next()
	open := p.expectPunct("(").pos
	var opts []*Option
	seen := map[string]Pos{}
	for !p.isPunct(")") {
		o := p.parseOption()
		if prev, dup := seen[o.Key]; dup {
			p.fail(o.Pos, "", "duplicate option '%s' (first set at line %s)", o.Key, prev)
		}
		seen[o.Key] = o.Pos
		opts = append(opts, o)
		if !p.acceptPunct(",") {
			break
		}
		if p.isPunct(")") {
			p.fail(p.cur().pos, "remove the trailing ','", "expected an option, found ')'")
		}
	}
	if t := p.cur(); t.kind == tString {
		p.fail(t.pos, "missing ',' between options?", "expected ',' or ')' after an option, found %s", t.describe())
	}
	p.expectClose(")", open, "WITH options")
	return opts
}

func (p *parser) parseOption() *Option {
	t := p.cur()
	o := &Option{Pos: t.pos}
	if t.kind != tString {
		if isIdentTok(t) || t.kind == tIdent {
			p.fail(t.pos, fmt.Sprintf("quote option keys: '%s' = '…'", t.text), "expected a 'quoted' option key, found %s", t.describe())
		}
		p.failExpected("a 'quoted' option key", "")
	}
	o.Key = p.next().text
	p.expectPunct("=")
	if v := p.cur(); v.kind != tString {
		p.fail(v.pos, fmt.Sprintf("quote option values: '%s' = '%s'", o.Key, v.raw),
			"expected a 'quoted' value for option '%s', found %s", o.Key, v.describe())
	}
	o.Value = p.next().text
	return o
}

func (p *parser) parseCreateView(pos Pos, temporary bool) *CreateView {
	v := &CreateView{Pos: pos, Temporary: temporary}
	v.IfNotExists = p.acceptIfNotExists()
	v.Name = p.parseName("view name")
	if p.isPunct("(") {
		v.Columns = p.parseIdentList("view column")
	}
	p.expectWord("AS")
	v.Query = p.parseQuery()
	return v
}

func (p *parser) parseCreateFunction(pos Pos, temporary, system bool) *CreateFunction {
	f := &CreateFunction{Pos: pos, Temporary: temporary, System: system}
	f.IfNotExists = p.acceptIfNotExists()
	f.Name = p.parseName("function name")
	p.expectWord("AS")
	f.Class = p.parseString("implementation class name")
	if p.acceptWord("LANGUAGE") {
		t := p.cur()
		if !p.acceptWord("JAVA", "SCALA", "PYTHON", "WASM") {
			p.failExpected("JAVA, SCALA, PYTHON or WASM after LANGUAGE", "")
		}
		f.Language = t.upper
	}
	if p.acceptWord("USING") {
		p.expectWord("JAR")
		f.UsingPos = p.cur().pos
		f.Using = p.parseString("module path")
	}
	return f
}

func (p *parser) parseDrop() Statement {
	d := &Drop{Pos: p.next().pos}
	d.Temporary = p.acceptWord("TEMPORARY")
	switch {
	case p.acceptWord("TABLE"):
		d.Object = TableObject
	case p.acceptWord("VIEW"):
		d.Object = ViewObject
	case p.acceptWord("FUNCTION"):
		d.Object = FunctionObject
	default:
		hint := ""
		if t := p.cur(); t.kind == tIdent {
			if kw, ok := closest(t.text, []string{"TABLE", "VIEW", "FUNCTION"}); ok {
				hint = "did you mean " + kw + "?"
			}
		}
		p.failExpected("TABLE, VIEW or FUNCTION after DROP", hint)
	}
	d.IfExists = p.acceptWords("IF", "EXISTS")
	d.Name = p.parseName(strings.ToLower(d.Object.String()) + " name")
	return d
}
