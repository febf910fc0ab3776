package parser

import (
	"fmt"
	"strings"
)

func (p *parser) parseScript() []Statement {
	var out []Statement
	for {
		for p.acceptPunct(";") {
		}
		if p.cur().kind == tEOF {
			return out
		}
		out = append(out, p.parseStatement())
		if !p.acceptPunct(";") {
			p.expectEOF("';' or end of input after the statement")
			return out
		}
	}
}

func (p *parser) parseStatement() Statement {
	t := p.cur()
	if p.isPunct("(") {
		return p.parseQuery()
	}
	switch {
	case p.isWord("SELECT", "WITH", "VALUES"):
		return p.parseQuery()
	case p.isWord("INSERT"):
		return p.parseInsert()
	case p.isWord("CREATE"):
		return p.parseCreate()
	case p.isWord("DROP"):
		return p.parseDrop()
	case p.isWord("SET"):
		return p.parseSet()
	case p.isWord("RESET"):
		p.next()
		s := &ResetStmt{Pos: t.pos}
		if p.cur().kind == tString {
			s.Key = p.next().text
		}
		return s
	case p.isWord("EXPLAIN"):
		return p.parseExplain()
	case p.isWord("SHOW"):
		return p.parseShow()
	case p.isWord("DESCRIBE", "DESC"):
		p.next()
		return &Describe{Pos: t.pos, Name: p.parseName("table name")}
	case p.isWord("EXECUTE"):
		return p.parseExecute()
	case p.isWord("BEGIN"):
		return p.parseBeginStatementSet()
	}
	p.failStatement()
	return nil
}

func (p *parser) failStatement() {
	t := p.cur()
	if t.kind == tIdent {
		switch t.upper {
		case "ALTER", "USE", "LOAD", "UNLOAD", "ANALYZE", "TRUNCATE", "UPDATE", "DELETE", "CALL", "ADD", "REMOVE":
			p.fail(t.pos, "", "%s statements are not supported", t.upper)
		}
		if kw, ok := closest(t.text, statementWords); ok {
			p.failExpected("a statement", "did you mean "+kw+"?")
		}
	}
	p.failExpected("a statement", "")
}

func (p *parser) parseSet() Statement {
	s := &SetStmt{Pos: p.next().pos}
	if p.isPunct(";") || p.cur().kind == tEOF {
		return s
	}
	if t := p.cur(); isIdentTok(t) || t.kind == tIdent {
		p.fail(t.pos, "write SET 'key' = 'value'", "expected a 'quoted' configuration key, found %s", t.describe())
	}
	s.Key = p.parseString("configuration key")
	p.expectPunct("=")
	if t := p.cur(); t.kind != tString {
		p.fail(t.pos, fmt.Sprintf("quote the value: SET '%s' = '…'", s.Key),
			"expected a 'quoted' value for '%s', found %s", s.Key, t.describe())
	}
	s.Value = p.next().text
	return s
}

var explainDetails = []string{string(ChangelogMode), string(EstimatedCost), string(JSONExecutionPlan), string(PlanAdvice)}

func (p *parser) parseExplain() Statement {
	e := &Explain{Pos: p.next().pos}
	p.acceptWords("PLAN", "FOR")
	for {
		t := p.cur()
		if t.kind != tIdent || isStatementWord(t.upper) || t.upper == "STATEMENT" || t.upper == "EXECUTE" {
			break
		}
		if !containsStr(explainDetails, t.upper) {
			hint := "details are " + strings.Join(explainDetails, ", ")
			if kw, ok := closest(t.text, explainDetails); ok {
				hint = "did you mean " + kw + "?"
			}
			p.fail(t.pos, hint, "unknown EXPLAIN detail '%s'", t.text)
		}
		p.next()
		e.Details = append(e.Details, ExplainDetail(t.upper))
		if !p.acceptPunct(",") {
			break
		}
	}
	switch {
	case p.isWord("SELECT", "WITH", "VALUES") || p.isPunct("("):
		e.Stmt = p.parseQuery()
	case p.isWord("INSERT"):
		e.Stmt = p.parseInsert()
	case p.isWord("EXECUTE"):
		e.Stmt = p.parseExecute()
	case p.isWord("STATEMENT"):
		e.Stmt = p.parseStatementSetBody(p.cur().pos)
	default:
		p.failExpected("a query, INSERT or STATEMENT SET to explain", "")
	}
	return e
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (p *parser) parseShow() Statement {
	s := &Show{Pos: p.next().pos}
	switch {
	case p.acceptWord("TABLES"):
		s.Object = TableObject
	case p.acceptWord("VIEWS"):
		s.Object = ViewObject
	case p.acceptWord("FUNCTIONS"):
		s.Object = FunctionObject
	default:
		hint := "supported: SHOW TABLES, SHOW VIEWS, SHOW FUNCTIONS"
		if t := p.cur(); t.kind == tIdent {
			if kw, ok := closest(t.text, []string{"TABLES", "VIEWS", "FUNCTIONS"}); ok {
				hint = "did you mean SHOW " + kw + "?"
			}
		}
		p.failExpected("TABLES, VIEWS or FUNCTIONS", hint)
	}
	return s
}

// parseExecute reads EXECUTE STATEMENT SET BEGIN … END, or EXECUTE INSERT.
func (p *parser) parseExecute() Statement {
	pos := p.next().pos
	if p.isWord("INSERT") {
		return p.parseInsert()
	}
	return p.parseStatementSetBody(pos)
}

// parseStatementSetBody reads STATEMENT SET BEGIN insert; … END.
func (p *parser) parseStatementSetBody(pos Pos) *StatementSet {
	p.expectWord("STATEMENT")
	p.expectWord("SET")
	open := p.expectWord("BEGIN").pos
	return p.parseSetInserts(pos, open)
}

// parseBeginStatementSet reads the SQL-client form BEGIN STATEMENT SET;
// insert; … END.
func (p *parser) parseBeginStatementSet() Statement {
	open := p.next().pos
	p.expectWord("STATEMENT")
	p.expectWord("SET")
	return p.parseSetInserts(open, open)
}

func (p *parser) parseSetInserts(pos, open Pos) *StatementSet {
	s := &StatementSet{Pos: pos}
	for {
		for p.acceptPunct(";") {
		}
		switch {
		case p.isWord("END"):
			if len(s.Inserts) == 0 {
				p.fail(p.cur().pos, "", "empty STATEMENT SET: expected at least one INSERT")
			}
			p.next()
			return s
		case p.isWord("INSERT"):
			s.Inserts = append(s.Inserts, p.parseInsert())
			if !p.isWord("END") {
				p.expectPunct(";")
			}
		case p.cur().kind == tEOF:
			p.failExpected(fmt.Sprintf("END to close the STATEMENT SET opened at line %s", open), "")
		default:
			p.failExpected("INSERT or END (a STATEMENT SET holds only INSERT statements)", "")
		}
	}
}

func (p *parser) parseInsert() *Insert {
	ins := &Insert{Pos: p.next().pos}
	if p.acceptWord("OVERWRITE") {
		ins.Overwrite = true
	} else {
		p.expectWord("INTO")
	}
	ins.Table = p.parseName("table name")
	if p.isWord("PARTITION") {
		ins.Partition = p.parsePartitionSpec()
	}
	if p.isPunct("(") && !p.startsQuery(0) {
		ins.Columns = p.parseIdentList("column")
	}
	if !p.isWord("SELECT", "WITH", "VALUES") && !p.isPunct("(") {
		hint := ""
		if kw, ok := closest(p.cur().text, []string{"SELECT", "VALUES", "WITH"}); ok && p.cur().kind == tIdent {
			hint = "did you mean " + kw + "?"
		}
		p.failExpected("a query (SELECT or VALUES) after INSERT INTO "+formatName(ins.Table), hint)
	}
	ins.Query = p.parseQuery()
	return ins
}

func (p *parser) parsePartitionSpec() []*PartitionValue {
	p.next()
	open := p.expectPunct("(").pos
	var out []*PartitionValue
	for {
		pv := &PartitionValue{Pos: p.cur().pos, Column: p.parseIdent("partition column")}
		p.expectPunct("=")
		pv.Value = p.parsePrimary()
		out = append(out, pv)
		if !p.acceptPunct(",") {
			break
		}
	}
	p.expectClose(")", open, "partition spec")
	return out
}

// startsQuery reports whether the tokens from offset n, past any opening
// parentheses, begin a query.
func (p *parser) startsQuery(n int) bool {
	for p.isPunctAt(n, "(") {
		n++
	}
	return p.isWordAt(n, "SELECT", "WITH", "VALUES")
}
