package expr_test

import "testing"

// Values from Flink's documentation and its ScalarFunctionsTest.
func TestRareStringFunctions(t *testing.T) {
	run(t, []evalCase{
		{"OVERLAY('This is an old string' PLACING ' new' FROM 10 FOR 5)", "This is a new string", "STRING NOT NULL"},
		{"OVERLAY('xxxxxtest' PLACING 'xxxx' FROM 6)", "xxxxxxxxx", ""},
		{"OVERLAY('xxxxxtest' PLACING 'xxxx' FROM 6 FOR 2)", "xxxxxxxxxst", ""},
		{"OVERLAY('abc' PLACING 'x' FROM 0)", "abc", ""},
		{"OVERLAY('abc' PLACING 'x' FROM 4)", "abc", ""},
		{"OVERLAY(ns PLACING 'x' FROM 1)", "NULL", "STRING"},
		{"INSTR('Corporate Floor', 'or', 3, 2)", "14", "INT NOT NULL"},
		{"INSTR('Corporate Floor', 'or', -3, 2)", "2", ""},
		{"INSTR('Tech on the net', 'e')", "2", ""},
		{"INSTR('Tech on the net', 'e', 1, 2)", "11", ""},
		{"INSTR('Tech on the net', 'e', 1, 3)", "14", ""},
		{"INSTR('Tech on the net', 'e', 0)", "0", ""},
		{"INSTR('Tech on the net', 'e', 1, 4)", "0", ""},
		{"INSTR('myteststring', 'st')", "5", ""},
		{"INSTR(s, 'o', n)", "NULL", "INT"},
		{"TRANSLATE('AaBbCc', 'abc', '123')", "A1B2C3", "STRING NOT NULL"},
		{"TRANSLATE('AaBbCc', 'abc', '1')", "A1BC", ""},
		{"TRANSLATE('AaBbCc', 'abc', '')", "ABC", ""},
		{"TRANSLATE('www.apache.org', 'wapcheo', 'WAPCHEO')", "WWW.APACHE.Org", ""},
		{"TRANSLATE(ns, 'a', 'b')", "NULL", "STRING"},
		{"TRANSLATE('abc', ns, 'x')", "abc", ""},
		{"ELT(1, 'scala', 'java')", "scala", "VARCHAR(5)"},
		{"ELT(2, 'scala', 'java')", "java", ""},
		{"ELT(3, 'scala', 'java')", "NULL", ""},
		{"ELT(0, 'scala', 'java')", "NULL", ""},
		{"ELT(n, 'scala', 'java')", "NULL", ""},
		{"ELT(2, s, 'x')", "x", "STRING"},
		{"FLOOR(TIMESTAMP '2024-01-15 08:05:03' TO DECADE)", "2020-01-01 00:00:00", ""},
		{"CEIL(TIMESTAMP '2024-01-15 08:05:03' TO DECADE)", "2030-01-01 00:00:00", ""},
		{"FLOOR(DATE '2024-01-15' TO DECADE)", "2020-01-01", ""},
		{"FLOOR(TIMESTAMP '2024-01-15 08:05:03' TO CENTURY)", "2001-01-01 00:00:00", ""},
		{"CEIL(TIMESTAMP '2024-01-15 08:05:03' TO CENTURY)", "2101-01-01 00:00:00", ""},
		{"FLOOR(TIMESTAMP '2024-01-15 08:05:03' TO MILLENNIUM)", "2001-01-01 00:00:00", ""},
		{"CEIL(TIMESTAMP '2024-01-15 08:05:03' TO MILLENNIUM)", "3001-01-01 00:00:00", ""},
		{"FLOOR(TIMESTAMP '2000-06-15 00:00:00' TO CENTURY)", "1901-01-01 00:00:00", ""},
	})
}
