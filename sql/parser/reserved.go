package parser

// reserved are the words that can never be a bare identifier, alias or
// function name: they end or structure clauses, so treating one as an alias
// would swallow the clause. Everything else the parser recognizes by
// context (DATE 'x', ROW(…), WATERMARK FOR, HOUR(x), …) is a keyword only
// there. Compared upper-case.
var reserved = setOf(
	"ALL", "AND", "AS", "ASC", "BETWEEN", "BY", "CASE", "CAST", "CREATE", "CROSS",
	"CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "DESC", "DESCRIBE", "DISTINCT",
	"DROP", "ELSE", "END", "ESCAPE", "EXCEPT", "EXECUTE", "EXISTS", "EXPLAIN", "FALSE",
	"FETCH", "FOR", "FROM", "FULL", "GROUP", "HAVING", "IN", "INNER", "INSERT",
	"INTERSECT", "INTERVAL", "INTO", "IS", "JOIN", "LATERAL", "LEFT", "LIKE", "LIMIT",
	"LOCALTIME", "LOCALTIMESTAMP", "MATCH_RECOGNIZE", "MINUS", "NATURAL", "NOT", "NULL",
	"OFFSET", "ON", "OR", "ORDER", "OUTER", "OVER", "PARTITION", "RESET", "RIGHT",
	"SELECT", "SET", "SHOW", "SIMILAR", "TABLE", "THEN", "TRUE", "UNION", "UNKNOWN",
	"UNNEST", "USE", "USING", "VALUES", "WHEN", "WHERE", "WINDOW", "WITH", "ALTER",
)

// contextual are keywords that are not reserved but that the parser looks
// for in some position where an identifier could also stand. Format quotes
// identifiers spelled like any of these (or like a reserved word), so that
// its output never depends on which reading the parser picks.
var contextual = setOf(
	"DATE", "TIME", "TIMESTAMP", "TIMESTAMP_LTZ", "ARRAY", "MAP", "ROW", "MULTISET",
	"TRY_CAST", "EXTRACT", "POSITION", "TRIM", "FLOOR", "CEIL", "CEILING", "SUBSTRING",
	"TIMESTAMPADD", "TIMESTAMPDIFF", "BOTH", "LEADING", "TRAILING",
	"CONSTRAINT", "WATERMARK", "PRIMARY", "KEY", "ENFORCED", "METADATA", "VIRTUAL",
	"COMMENT", "PARTITIONED", "TEMPORARY", "SYSTEM", "IF", "FUNCTION", "VIEW",
	"UNBOUNDED", "CURRENT", "PRECEDING", "FOLLOWING", "ROWS", "RANGE", "NULLS",
	"FIRST", "LAST", "FILTER", "DESCRIPTOR", "SYSTEM_TIME", "OF", "TO", "ORDINALITY",
	"OVERWRITE", "STATEMENT", "BEGIN", "PLAN", "LANGUAGE", "TABLES", "VIEWS",
	"FUNCTIONS", "WITHOUT", "ZONE", "LOCAL", "PRECISION",
	"YEAR", "YEARS", "QUARTER", "MONTH", "MONTHS", "WEEK", "DAY", "DAYS", "HOUR",
	"HOURS", "MINUTE", "MINUTES", "SECOND", "SECONDS", "MILLISECOND", "MICROSECOND",
	"NANOSECOND", "DOW", "DOY", "EPOCH", "DECADE", "CENTURY", "MILLENNIUM", "ISODOW",
	"ISOYEAR",
)

// niladic are the functions called without parentheses.
var niladic = setOf("CURRENT_DATE", "CURRENT_TIME", "CURRENT_TIMESTAMP", "LOCALTIME", "LOCALTIMESTAMP")

// clauseWords are the keywords a misspelled word is compared against when
// it was read as an alias and the parse failed right after it.
var clauseWords = []string{"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "JOIN",
	"INNER", "LEFT", "RIGHT", "FULL", "CROSS", "UNION", "WINDOW", "SELECT", "OUTER", "ON",
	"AND", "OR", "NOT", "BETWEEN", "LIKE", "PARTITION", "OVER"}

// statementWords start statements; an unknown first word is compared to them.
var statementWords = []string{"SELECT", "INSERT", "CREATE", "DROP", "SET", "RESET", "EXPLAIN",
	"SHOW", "DESCRIBE", "DESC", "EXECUTE", "BEGIN", "WITH", "VALUES"}

func setOf(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// isKeyword reports whether an identifier spelled like word must be quoted
// when printed.
func isKeyword(word string) bool {
	return reserved[word] || contextual[word] || sqlReserved[word]
}

// sqlReserved are the reserved words of SQL:2011 as Calcite (and so Flink)
// reserves them, plus Flink's own. Weir's parser accepts most of them as
// names, but Format quotes them so that its output also parses in Flink.
var sqlReserved = setOf(
	"ABS", "ALLOCATE", "ALLOW", "ANY", "ARE", "ARRAY_MAX_CARDINALITY", "ASENSITIVE",
	"ASYMMETRIC", "AT", "ATOMIC", "AUTHORIZATION", "AVG", "BEGIN_FRAME", "BEGIN_PARTITION",
	"BIGINT", "BINARY", "BIT", "BLOB", "BOOLEAN", "BYTES", "CALL", "CALLED", "CARDINALITY",
	"CASCADED", "CHAR", "CHAR_LENGTH", "CHARACTER", "CHARACTER_LENGTH", "CHECK", "CLASSIFIER",
	"CLOB", "CLOSE", "COALESCE", "COLLATE", "COLLECT", "COLUMN", "COMMIT", "CONDITION",
	"CONNECT", "CONTAINS", "CONVERT", "CORR", "CORRESPONDING", "COUNT", "COVAR_POP",
	"COVAR_SAMP", "CUBE", "CUME_DIST", "CURRENT_CATALOG", "CURRENT_DEFAULT_TRANSFORM_GROUP",
	"CURRENT_PATH", "CURRENT_ROLE", "CURRENT_ROW", "CURRENT_SCHEMA",
	"CURRENT_TRANSFORM_GROUP_FOR_TYPE", "CURRENT_USER", "CURSOR", "CYCLE", "DEALLOCATE", "DEC",
	"DECIMAL", "DECLARE", "DEFAULT", "DEFINE", "DELETE", "DENSE_RANK", "DEREF",
	"DETERMINISTIC", "DISALLOW", "DISCONNECT", "DOUBLE", "DYNAMIC", "EACH", "ELEMENT", "EMPTY",
	"END_FRAME", "END_PARTITION", "EQUALS", "EVERY", "EXEC", "EXP", "EXTEND", "EXTERNAL",
	"FIRST_VALUE", "FLOAT", "FOREIGN", "FRAME_ROW", "FREE", "FUSION", "GET", "GLOBAL", "GRANT",
	"GROUPING", "GROUPS", "HOLD", "IDENTITY", "IMPORT", "INDICATOR", "INITIAL", "INOUT",
	"INSENSITIVE", "INT", "INTEGER", "INTERSECTION", "JSON_ARRAY", "JSON_ARRAYAGG",
	"JSON_EXISTS", "JSON_OBJECT", "JSON_OBJECTAGG", "JSON_QUERY", "JSON_VALUE", "LAG", "LARGE",
	"LAST_VALUE", "LEAD", "LIKE_REGEX", "LN", "LOWER", "MATCH", "MATCHES", "MATCH_NUMBER",
	"MAX", "MEASURES", "MEMBER", "MERGE", "METHOD", "MIN", "MOD", "MODIFIES", "MODULE",
	"NATIONAL", "NCHAR", "NCLOB", "NEW", "NEXT", "NO", "NONE", "NORMALIZE", "NTH_VALUE",
	"NTILE", "NULLIF", "NUMERIC", "OCCURRENCES_REGEX", "OCTET_LENGTH", "OLD", "OMIT", "ONE",
	"ONLY", "OPEN", "OUT", "OVERLAPS", "OVERLAY", "PARAMETER", "PATTERN", "PER", "PERCENT",
	"PERCENT_RANK", "PERCENTILE_CONT", "PERCENTILE_DISC", "PERIOD", "PERMUTE", "PORTION",
	"POSITION_REGEX", "POWER", "PRECEDES", "PREPARE", "PREV", "PROCEDURE", "RAW", "REAL",
	"READS", "RECURSIVE", "REF", "REFERENCES", "REFERENCING", "REGR_AVGX", "REGR_AVGY",
	"REGR_COUNT", "REGR_INTERCEPT", "REGR_R2", "REGR_SLOPE", "REGR_SXX", "REGR_SXY",
	"REGR_SYY", "RELEASE", "RESULT", "RETURN", "RETURNS", "REVOKE", "ROLLBACK", "ROLLUP",
	"ROW_NUMBER", "RUNNING", "SAVEPOINT", "SCOPE", "SCROLL", "SEARCH", "SEEK", "SENSITIVE",
	"SESSION_USER", "SKIP", "SMALLINT", "SOME", "SPECIFIC", "SPECIFICTYPE", "SQL",
	"SQLEXCEPTION", "SQLSTATE", "SQLWARNING", "SQRT", "START", "STATIC", "STDDEV_POP",
	"STDDEV_SAMP", "STREAM", "STRING", "SUBMULTISET", "SUBSET", "SUBSTRING_REGEX", "SUCCEEDS",
	"SUM", "SYMMETRIC", "SYSTEM_USER", "TABLESAMPLE", "TIMEZONE_HOUR", "TIMEZONE_MINUTE",
	"TINYINT", "TRANSLATE", "TRANSLATE_REGEX", "TRANSLATION", "TREAT", "TRIGGER", "TRIM_ARRAY",
	"TRUNCATE", "UESCAPE", "UNIQUE", "UPDATE", "UPPER", "UPSERT", "USER", "VALUE", "VALUE_OF",
	"VAR_POP", "VAR_SAMP", "VARBINARY", "VARCHAR", "VARYING", "VERSIONING", "WHENEVER",
	"WIDTH_BUCKET", "WITHIN",
)
