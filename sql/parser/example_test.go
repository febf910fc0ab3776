package parser_test

import (
	"errors"
	"fmt"

	"github.com/weirstream/weir/sql/parser"
)

func ExampleParseScript() {
	stmts, err := parser.ParseScript(`
SET 'parallelism.default' = '2';
create table clicks (user_id bigint, url string, ts timestamp(3),
  watermark for ts as ts - interval '5' second
) with ('connector' = 'datagen');
select user_id, count(*) as n from clicks group by user_id;`)
	if err != nil {
		panic(err)
	}
	for _, s := range stmts {
		fmt.Printf("%T: %s\n", s, parser.Format(s))
	}
	// Output:
	// *parser.SetStmt: SET 'parallelism.default' = '2'
	// *parser.CreateTable: CREATE TABLE clicks (user_id BIGINT, url STRING, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND) WITH ('connector' = 'datagen')
	// *parser.Query: SELECT user_id, COUNT(*) AS n FROM clicks GROUP BY user_id
}

func ExampleError() {
	src := "SELECT user_id, COUNT(*)\nFROM clicks\nGRUOP BY user_id"
	_, err := parser.ParseScript(src)
	var perr *parser.Error
	if errors.As(err, &perr) {
		fmt.Println(perr.Annotate(src))
	}
	// Output:
	// line 3:1: unexpected 'GRUOP'; hint: did you mean GROUP BY?
	//   GRUOP BY user_id
	//   ^
}
